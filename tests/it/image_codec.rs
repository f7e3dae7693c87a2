//! IMG-7..IMG-9 through the Rust API: a codec (the `image` crate's, `arkagent::fuzzing::
//! PixelCodec`) prepares photos before a run — a 12 MP HEIC becomes the JPEG of exactly the
//! size an OpenAI-format provider would use, a turned photo arrives upright at Claude's
//! size, a photo the provider takes as it is goes untouched; a failing codec, or a cancel
//! while it works, writes nothing; edit-and-resend prepares its new input too; the rules
//! come from the model's name; the estimate is one call.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use arkagent::compress::estimate_image_tokens;
use arkagent::fuzzing::PixelCodec;
use arkagent::history::{image_fixtures, ContentPart, ImageData, ImagePart, ImageTokenRule};
use arkagent::runtime::{ImageCodec, ImageCodecRequest};
use arkagent::{AgentRuntime, AgentRuntimeConfig, Content, ErrorCode};
use async_trait::async_trait;

use crate::support::*;

fn heic_12mp() -> Vec<u8> {
    image_fixtures::heif(&[b"heic", b"mif1"], 4032, 3024, &[], 2048)
}

/// A real JPEG of `w` × `h` (left half red, right half blue) with an EXIF `orientation`.
fn real_jpeg(w: u32, h: u32, orientation: u16) -> Vec<u8> {
    let pixels = image::RgbImage::from_fn(w, h, |x, _| if x < w / 2 { image::Rgb([255, 0, 0]) } else { image::Rgb([0, 0, 255]) });
    let mut jpeg = Vec::new();
    pixels.write_with_encoder(image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 90)).unwrap();
    let mut app1 = b"Exif\0\0".to_vec();
    app1.extend(image_fixtures::tiff_orientation(orientation));
    let mut out = jpeg[..2].to_vec();
    out.extend([0xFF, 0xE1]);
    out.extend(u16::try_from(app1.len() + 2).unwrap().to_be_bytes());
    out.extend(app1);
    out.extend(&jpeg[2..]);
    out
}

fn runtime(model: &str, codec: Option<Arc<dyn ImageCodec>>, keep: bool) -> (AgentRuntime, Arc<ScriptedModel>) {
    let transport = ScriptedModel::with(|_, i| text_reply(&format!("answer {i}"), 900));
    let mut c = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, model));
    c.image_codec = codec;
    c.keep_original_images = keep;
    (AgentRuntime::new(c, transport.clone()).unwrap(), transport)
}

fn photo_input(bytes: Vec<u8>) -> Content {
    Content::Parts(vec![ContentPart::text("what is this?"), ContentPart::image(ImageData::new(bytes).unwrap())])
}

/// The photo of the last request: its type and decoded size.
fn sent_photo(model: &ScriptedModel) -> (String, image::DynamicImage) {
    let body = model.requests.lock().unwrap().last().cloned().unwrap();
    let user = body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap().clone();
    let url = user["content"].as_array().unwrap().iter().find(|p| p["type"] == "image_url").unwrap()["image_url"]["url"].as_str().unwrap().to_owned();
    let (mime, data) = url.strip_prefix("data:").unwrap().split_once(";base64,").unwrap();
    let bytes = crate::photos::b64(data);
    (mime.to_owned(), image::load_from_memory(&bytes).unwrap())
}

#[tokio::test]
async fn img_9_a_12_mp_heic_reaches_an_openai_model_as_the_jpeg_of_its_resize() {
    let codec = Arc::new(PixelCodec::default());
    let (rt, model) = runtime("gpt-4o", Some(codec.clone()), true);
    let heic = heic_12mp();
    let original_id = ImageData::new(heic.clone()).unwrap().id().to_owned();
    let outcome = rt.run(photo_input(heic)).await.unwrap();
    assert_eq!(codec.calls.load(Ordering::SeqCst), 1);
    let (mime, sent) = sent_photo(&model);
    assert_eq!((mime.as_str(), sent.width(), sent.height()), ("image/jpeg", 1024, 768));
    // The token count is the one the original would have had: 85 + 170 × 2 × 2.
    let held = rt.messages()[0].images().next().unwrap().clone();
    assert_eq!(estimate_image_tokens(&model_config("h", "k", "gpt-4o"), &held).unwrap().tokens, 765);
    assert_eq!(outcome.usage.prompt_tokens, 900);
    // Kept on request: the original reads back by its id.
    assert_eq!(rt.image(&original_id).map(|i| i.mime().as_str()), Some("image/heic"));
}

#[tokio::test]
async fn img_9_a_turned_photo_arrives_upright_at_the_providers_size() {
    let codec = Arc::new(PixelCodec::default());
    let (rt, model) = runtime("claude-sonnet-4-5", Some(codec.clone()), false);
    // Stored 2400 × 1800, EXIF 6: displayed 1800 × 2400.
    let photo = real_jpeg(2400, 1800, 6);
    let part = ImagePart::data(ImageData::new(photo.clone()).unwrap(), None);
    let estimate = estimate_image_tokens(&model_config("h", "k", "claude-sonnet-4-5"), &part).unwrap();
    assert_eq!(estimate.rule, ImageTokenRule::Anthropic);
    assert!(estimate.height > estimate.width && estimate.height <= 1568, "{estimate:?}");
    rt.run(photo_input(photo.clone())).await.unwrap();
    let (mime, sent) = sent_photo(&model);
    assert_eq!((mime.as_str(), sent.width(), sent.height()), ("image/jpeg", estimate.width, estimate.height));
    // EXIF 6 turns the stored left half (red) to the top.
    let top = sent.to_rgb8().get_pixel(sent.width() / 2, 2).0;
    assert!(top[0] > 200 && top[2] < 60, "{top:?}");
    // Not kept: the original is gone.
    assert!(rt.image(ImageData::new(photo).unwrap().id()).is_none());
}

#[tokio::test]
async fn img_9_a_photo_the_provider_takes_as_it_is_goes_untouched() {
    let codec = Arc::new(PixelCodec::default());
    let (rt, model) = runtime("gpt-5", Some(codec.clone()), false);
    let small = real_jpeg(640, 480, 1);
    rt.run(photo_input(small.clone())).await.unwrap();
    assert_eq!(codec.calls.load(Ordering::SeqCst), 0);
    let body = model.requests.lock().unwrap()[0].to_string();
    assert!(body.contains(&ImageData::new(small).unwrap().data_url().to_string()));
}

struct Failing(&'static str);

#[async_trait]
impl ImageCodec for Failing {
    async fn transcode(&self, request: &ImageCodecRequest) -> Result<Vec<u8>, String> {
        match self.0 {
            "hang" => std::future::pending().await,
            "wrong size" => Ok(image_fixtures::jpeg(request.width as u16 + 1, request.height as u16, None, false, 10)),
            "turned" => Ok(image_fixtures::jpeg(request.width as u16, request.height as u16, Some(6), false, 10)),
            "png" => Ok(image_fixtures::png(request.width, request.height, &[])),
            _ => Err("no decoder for this".into()),
        }
    }
}

#[tokio::test]
async fn img_9_a_failing_codec_fails_the_run_with_image_codec_failed_and_writes_nothing() {
    for how in ["error", "wrong size", "turned", "png"] {
        let (rt, model) = runtime("gpt-4o", Some(Arc::new(Failing(how))), true);
        let err = rt.run(photo_input(heic_12mp())).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::ImageCodecFailed, "{how}: {err}");
        assert!(rt.messages().is_empty() && model.request_count() == 0, "{how}");
    }
    // Cancelled while the codec works: cancelled, nothing written.
    let (rt, model) = runtime("gpt-4o", Some(Arc::new(Failing("hang"))), false);
    let run = rt.start_run(photo_input(heic_12mp())).unwrap();
    let handle = tokio::spawn(run);
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    rt.cancel();
    let err = handle.await.unwrap().unwrap_err();
    assert_eq!(err.code(), ErrorCode::Cancelled);
    assert!(rt.messages().is_empty() && model.request_count() == 0);
}

#[tokio::test]
async fn img_9_edit_and_resend_prepares_its_new_photo() {
    let codec = Arc::new(PixelCodec::default());
    let (rt, model) = runtime("gpt-4o", Some(codec.clone()), false);
    let run_id = rt.run("hello").await.unwrap().run_id;
    rt.edit_and_resend(&run_id, photo_input(heic_12mp())).await.unwrap();
    assert_eq!(codec.calls.load(Ordering::SeqCst), 1);
    assert_eq!(sent_photo(&model).0, "image/jpeg");
}

#[tokio::test]
async fn img_8_the_rule_comes_from_the_model_name_unless_the_host_sets_one() {
    let photo = ImagePart::data(ImageData::new(image_fixtures::png(1024, 1024, &[])).unwrap(), None);
    let rule = |model: &str| estimate_image_tokens(&model_config("h", "k", model), &photo).unwrap();
    assert_eq!((rule("gpt-5").rule, rule("gpt-5").tokens), (ImageTokenRule::OpenAiGpt5Tiles, 70 + 4 * 140));
    assert_eq!(rule("gpt-4o-mini-2024-07-18").tokens, 2833 + 4 * 5667);
    assert_eq!(rule("openrouter/google/gemini-2.5-pro").tokens, 258 * 4);
    assert_eq!(rule("qwen3-vl-plus").rule, ImageTokenRule::Qwen3Vl);
    assert_eq!(rule("deepseek-v4-flash").rule, ImageTokenRule::OpenAiTiles, "the wire format's default");
    let mut high = model_config("h", "k", "qwen3-vl-plus");
    high.extra_body.insert("vl_high_resolution_images".into(), true.into());
    assert_eq!(estimate_image_tokens(&high, &photo).unwrap().rule, ImageTokenRule::Qwen3VlHighRes);
    let mut set = model_config("h", "k", "gpt-5");
    set.image_tokens = Some(ImageTokenRule::Anthropic);
    assert_eq!(estimate_image_tokens(&set, &photo).unwrap().rule, ImageTokenRule::Anthropic);
    // The family's pixel and frame policy.
    let animated = ImagePart::data(ImageData::new(image_fixtures::gif(64, 48, 3)).unwrap(), None);
    assert_eq!(estimate_image_tokens(&model_config("h", "k", "gpt-4o"), &animated).unwrap_err().code(), ErrorCode::ImageAnimated);
    assert!(estimate_image_tokens(&model_config("h", "k", "claude-opus-4"), &animated).is_ok());
    let huge = ImagePart::data(ImageData::new(image_fixtures::png(65535, 65535, &[])).unwrap(), None);
    assert_eq!(estimate_image_tokens(&model_config("h", "k", "gpt-4o"), &huge).unwrap_err().code(), ErrorCode::ImageDimensionsUnsupported);
    let wide = ImagePart::data(ImageData::new(image_fixtures::png(10_000, 100, &[])).unwrap(), None);
    assert_eq!(estimate_image_tokens(&model_config("h", "k", "claude-opus-4"), &wide).unwrap_err().code(), ErrorCode::ImageDimensionsUnsupported);
}

#[tokio::test]
async fn img_6_a_run_refuses_what_the_family_refuses_and_writes_nothing() {
    let (rt, model) = runtime("gpt-4o", None, false);
    let err = rt.run(photo_input(image_fixtures::gif(64, 48, 2))).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::ImageAnimated);
    let err = rt.run(photo_input(heic_12mp())).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::ImageUnsupportedType);
    assert!(err.to_string().contains("register an image codec"), "{err}");
    assert!(rt.messages().is_empty() && model.request_count() == 0);
}

/// `runtime::estimate_prepared_image_tokens`: "A photo the codec would prepare is checked as
/// the codec gives it back — a type the family does not take is no refusal, its size is the
/// one asked of the codec — and costs what it costs unprepared"; `estimate_image_tokens`
/// keeps "the checks a run without an image codec makes". Each agrees with a real run.
#[tokio::test]
async fn img_8_img_9_the_prepared_estimate_is_what_a_run_with_a_codec_sends() {
    use arkagent::runtime::estimate_prepared_image_tokens;
    let part = ImagePart::data(ImageData::new(heic_12mp()).unwrap(), None);
    let gpt = model_config("h", "k", "gpt-4o");
    // Without a codec the run refuses it, and so does the plain estimate.
    assert_eq!(estimate_image_tokens(&gpt, &part).unwrap_err().code(), ErrorCode::ImageUnsupportedType);
    let (plain, _) = runtime("gpt-4o", None, false);
    assert_eq!(plain.run(photo_input(heic_12mp())).await.unwrap_err().code(), ErrorCode::ImageUnsupportedType);
    // With one, the run sends a 1024×768 JPEG at 765 tokens: the prepared estimate says so.
    let estimate = estimate_prepared_image_tokens(&gpt, &part).unwrap();
    assert_eq!((estimate.rule, estimate.tokens, estimate.width, estimate.height), (ImageTokenRule::OpenAiTiles, 765, 1024, 768));
    let (rt, model) = runtime("gpt-4o", Some(Arc::new(PixelCodec::default())), false);
    rt.run(photo_input(heic_12mp())).await.unwrap();
    let (_, sent) = sent_photo(&model);
    assert_eq!((sent.width(), sent.height()), (estimate.width, estimate.height));
    // A photo the family takes as it is: both estimates agree.
    let jpeg = ImagePart::data(ImageData::new(real_jpeg(640, 480, 1)).unwrap(), None);
    assert_eq!(estimate_prepared_image_tokens(&gpt, &jpeg).unwrap(), estimate_image_tokens(&gpt, &jpeg).unwrap());
    // What no codec fixes is refused alike: a Qwen-VL photo 300 times wider than high.
    let qwen = model_config("h", "k", "qwen-vl-max");
    let thin = ImagePart::data(ImageData::new(real_jpeg(3000, 10, 1)).unwrap(), None);
    assert_eq!(estimate_prepared_image_tokens(&qwen, &thin).unwrap_err().code(), ErrorCode::ImageDimensionsUnsupported);
}
