//! IMG-1, IMG-4, STORE-2: photos through exportState/importState and the SQLite store —
//! content-addressed, stored once, freed with their session — and the files written by
//! main at a901f61 (before images) loading unchanged.

use std::sync::Arc;

use arkagent::history::ImageData;
use arkagent::store::SessionStore;
use arkagent::{AgentRuntime, AgentRuntimeConfig, ModelConfig, SequentialIdGenerator, SqliteStore, ToolDefinition};
use serde_json::{json, Value};

use crate::images::runtime_with;
use crate::photos::*;
use crate::prefix::{assert_same_request, Recording};
use crate::store::temp_dir;
use crate::support::*;

fn store_at(path: &std::path::Path) -> Arc<dyn SessionStore> {
    Arc::new(SqliteStore::open(path).unwrap())
}

fn count(db: &std::path::Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn answering() -> Arc<ScriptedModel> {
    ScriptedModel::with(|_, i| text_reply(&format!("answer {i}"), 100))
}

#[tokio::test]
async fn img_1_a_chat_of_30_photos_reopens_with_every_photo() {
    let dir = temp_dir("img-30");
    let db = dir.join("photos.db");
    let photos: Vec<Vec<u8>> = (0..30).map(|i| jpeg(4032, 3024, 40_000 + i * 1000, i as u64)).collect();
    let before = {
        let rt = runtime_with(answering(), |c| c.store = Some(store_at(&db)));
        for (i, photo) in photos.iter().enumerate() {
            rt.run(input(&format!("photo {i}"), &[photo])).await.unwrap();
        }
        rt.messages()
    };
    assert_eq!(count(&db, "SELECT count(*) FROM images"), 30);
    let rt = runtime_with(answering(), |c| c.store = Some(store_at(&db)));
    let after = rt.messages();
    assert_eq!(after, before, "every message and photo is back");
    let back: Vec<Vec<u8>> = after.iter().flat_map(|m| m.images()).map(|i| i.image().unwrap().bytes().to_vec()).collect();
    assert_eq!(back, photos, "bit for bit, in order");
    // The message rows name their photos; the bytes are in the images table once.
    let stored_json: i64 = count(&db, "SELECT sum(length(json)) FROM messages");
    assert!(stored_json < 30 * 2_000, "no base64 in message rows: {stored_json} bytes");
}

#[tokio::test]
async fn img_4_the_same_photo_is_stored_once_and_deleting_a_session_frees_it() {
    let dir = temp_dir("img-once");
    let db = dir.join("photos.db");
    let photo = jpeg(1600, 1200, 30_000, 42);
    let other = jpeg(1600, 1200, 30_000, 43);
    let store = store_at(&db);
    let rt = runtime_with(answering(), |c| c.store = Some(store.clone()));
    rt.run(input("this one", &[&photo])).await.unwrap();
    rt.run(input("the same again", &[&photo])).await.unwrap();
    // In memory too: the second message shares the first one's bytes.
    let held: Vec<ImageData> = rt.messages().iter().flat_map(|m| m.images()).filter_map(|i| i.image().cloned()).collect();
    assert!(held[0].ptr_eq(&held[1]));
    assert_eq!(count(&db, "SELECT count(*) FROM images"), 1);
    let second = runtime_with(answering(), |c| {
        c.store = Some(store.clone());
        c.session_id = Some("second".into());
    });
    second.run(input("mine", &[&photo, &other])).await.unwrap();
    assert_eq!(count(&db, "SELECT count(*) FROM images"), 2);
    drop((rt, second));
    assert!(store.delete_session("photos").unwrap());
    assert_eq!(count(&db, "SELECT count(*) FROM images"), 2, "the second session still holds both");
    assert!(store.delete_session("second").unwrap());
    assert_eq!(count(&db, "SELECT count(*) FROM images"), 0, "deleting the sessions freed their photos");
    assert_eq!(count(&db, "SELECT count(*) FROM image_refs"), 0);
}

#[tokio::test]
async fn img_1_photos_round_trip_through_export_and_import_and_resume_byte_identically() {
    each_wire(|| async {
        let photo = jpeg(2000, 1500, 20_000, 5);
        let model = answering();
        let first = Arc::new(Recording::new(model.clone()));
        let rt = runtime_with(first.clone(), |_| {});
        rt.run(input("a photo", &[&photo])).await.unwrap();
        let exported = rt.export_state().unwrap();
        let state: Value = serde_json::from_str(&exported).unwrap();
        let part = &state["history"]["messages"][0]["content"][1];
        assert_eq!((part["type"].as_str(), part["mime_type"].as_str()), (Some("image"), Some("image/jpeg")));
        assert_eq!(b64(part["data"].as_str().unwrap()), photo);
        rt.run("next").await.unwrap();
        let second = Arc::new(Recording::new(answering()));
        let imported = runtime_with(second.clone(), |_| {});
        imported.import_state(&exported).unwrap();
        assert_eq!(imported.messages(), rt.messages()[..2].to_vec());
        imported.run("next").await.unwrap();
        assert_same_request(&first.bodies()[1], &second.bodies()[0]);
    })
    .await;
}

fn base_fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/images").join(name)
}

/// The config of tests/fixtures/images/README.md.
fn base_config(store: Option<Arc<dyn SessionStore>>) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.session_id = Some("base-a901f61".into());
    c.id_generator = Arc::new(SequentialIdGenerator::new("fx"));
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}});
    c.tools.register(ToolDefinition::new("weather", "Weather of a city", schema), Arc::new(WeatherTool::default())).unwrap();
    c.store = store;
    c
}

#[tokio::test]
async fn img_1_an_export_and_a_store_written_before_images_load_unchanged() {
    let exported = std::fs::read_to_string(base_fixture("main-a901f61-state.json")).unwrap();
    let expected_next = std::fs::read_to_string(base_fixture("main-a901f61-next-request.json")).unwrap();
    // The export: imports, re-exports its history byte for byte, resumes byte for byte.
    let transport = Arc::new(Recording::new(answering()));
    let rt = AgentRuntime::new(base_config(None), transport.clone()).unwrap();
    rt.import_state(&exported).unwrap();
    let again: Value = serde_json::from_str(&rt.export_state().unwrap()).unwrap();
    let before: Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(again["history"], before["history"]);
    rt.run("turn 3").await.unwrap();
    assert_same_request(&expected_next, &transport.bodies()[0]);
    // The store (schema 3): migrates to 4, resumes with the same messages and request.
    let dir = temp_dir("img-base-db");
    let db = dir.join("base.db");
    std::fs::copy(base_fixture("main-a901f61.db"), &db).unwrap();
    let transport = Arc::new(Recording::new(answering()));
    let store = store_at(&db);
    let resumed = AgentRuntime::new(base_config(Some(store.clone())), transport.clone()).unwrap();
    let imported = AgentRuntime::new(base_config(None), answering()).unwrap();
    imported.import_state(&exported).unwrap();
    assert_eq!(resumed.messages(), imported.messages());
    resumed.run("turn 3").await.unwrap();
    assert_same_request(&expected_next, &transport.bodies()[0]);
    // And it takes photos now.
    resumed.run(input("and this?", &[&small_png(9)])).await.unwrap();
    drop(resumed);
    let reopened = AgentRuntime::new(base_config(Some(store)), answering()).unwrap();
    assert_eq!(reopened.messages().iter().flat_map(|m| m.images()).count(), 1);
    assert_eq!(count(&db, "SELECT max(version) FROM arkagent_schema"), arkagent::store::SCHEMA_VERSION);
}
