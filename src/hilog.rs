//! DX-3: `tracing` output routed to HiLog on OpenHarmony (`cfg(target_env = "ohos")`),
//! so the library's spans and events show up in DevEco's log view. Elsewhere
//! [`install`] does nothing: desktop hosts install their own `tracing` subscriber.

/// HiLog domain used for the library's lines (the app range is 0x0000–0xFFFF).
pub const HILOG_DOMAIN: u32 = 0xA6A0;
/// HiLog tag used for the library's lines.
pub const HILOG_TAG: &str = "arkagent";

/// Routes `tracing` events at `max_level` and above to HiLog as the global default
/// subscriber. Returns `false` when nothing was installed: not on OpenHarmony, or a global
/// subscriber exists already (the host's wins).
pub fn install(max_level: tracing::Level) -> bool {
    imp::install(max_level)
}

#[cfg(target_env = "ohos")]
mod imp {
    use std::ffi::{c_char, c_int, c_uint, CString};
    use std::io::Write;

    use tracing_subscriber::fmt::MakeWriter;

    const LOG_APP: c_int = 0;
    const LOG_DEBUG: c_int = 3;
    const LOG_INFO: c_int = 4;
    const LOG_WARN: c_int = 5;
    const LOG_ERROR: c_int = 6;

    #[link(name = "hilog_ndk.z")]
    extern "C" {
        fn OH_LOG_Print(log_type: c_int, level: c_int, domain: c_uint, tag: *const c_char, fmt: *const c_char, ...) -> c_int;
    }

    /// One formatted event, printed to HiLog when dropped.
    pub(super) struct HilogLine {
        level: c_int,
        buf: Vec<u8>,
    }

    impl Write for HilogLine {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.buf.extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Drop for HilogLine {
        fn drop(&mut self) {
            let text = String::from_utf8_lossy(&self.buf);
            let Ok(line) = CString::new(text.trim_end().replace('\0', " ")) else { return };
            let (Ok(tag), Ok(fmt)) = (CString::new(super::HILOG_TAG), CString::new("%{public}s")) else { return };
            // SAFETY: NUL-terminated strings that outlive the call; the format takes one string.
            unsafe { OH_LOG_Print(LOG_APP, self.level, super::HILOG_DOMAIN, tag.as_ptr(), fmt.as_ptr(), line.as_ptr()) };
        }
    }

    pub(super) struct Hilog;

    impl<'a> MakeWriter<'a> for Hilog {
        type Writer = HilogLine;
        fn make_writer(&'a self) -> HilogLine {
            HilogLine { level: LOG_INFO, buf: Vec::new() }
        }
        fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> HilogLine {
            let level = match *meta.level() {
                tracing::Level::ERROR => LOG_ERROR,
                tracing::Level::WARN => LOG_WARN,
                tracing::Level::INFO => LOG_INFO,
                _ => LOG_DEBUG,
            };
            HilogLine { level, buf: Vec::with_capacity(128) }
        }
    }

    pub(super) fn install(max_level: tracing::Level) -> bool {
        let subscriber = tracing_subscriber::fmt()
            .with_writer(Hilog)
            .with_ansi(false)
            .without_time() // HiLog stamps lines itself
            .with_max_level(max_level)
            .finish();
        tracing::subscriber::set_global_default(subscriber).is_ok()
    }
}

#[cfg(not(target_env = "ohos"))]
mod imp {
    pub(super) fn install(_max_level: tracing::Level) -> bool {
        false
    }
}
