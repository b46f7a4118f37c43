//! Reading the configuration file off the runtime's threads: a regular
//! file only (a FIFO or a device at the path is refused without being
//! opened), at most [`MAX_BYTES`], within [`READ_TIMEOUT`], and one read at
//! a time (while a read is stuck on a slow file, the next is refused rather
//! than started beside it).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::config::MAX_BYTES;

/// How long one read of the file may take.
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// The configuration file at one path.
pub(crate) struct ConfigFile {
    path: PathBuf,
    /// A read is running on a blocking thread.
    busy: Arc<AtomicBool>,
}

impl ConfigFile {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self {
            path,
            busy: Arc::new(AtomicBool::new(false)),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file's text, read on a blocking thread within [`READ_TIMEOUT`].
    pub(crate) async fn read(&self) -> Result<String, String> {
        self.read_with(READ_TIMEOUT, read_regular).await
    }

    /// Runs `read` on a blocking thread, for at most `timeout`.
    async fn read_with(
        &self,
        timeout: Duration,
        read: fn(&Path) -> Result<String, String>,
    ) -> Result<String, String> {
        if self.busy.swap(true, Ordering::AcqRel) {
            return Err("the last read of the file has not ended".into());
        }
        let (path, busy) = (self.path.clone(), self.busy.clone());
        let read = tokio::task::spawn_blocking(move || {
            let text = read(&path);
            busy.store(false, Ordering::Release);
            text
        });
        match tokio::time::timeout(timeout, read).await {
            Ok(Ok(text)) => text,
            Ok(Err(e)) => Err(format!("the read failed: {e}")),
            Err(_) => Err(format!("not read within {} s", timeout.as_secs_f64())),
        }
    }
}

/// Reads a regular file of at most [`MAX_BYTES`] (blocking).
fn read_regular(path: &Path) -> Result<String, String> {
    let metadata = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !metadata.is_file() {
        return Err("not a regular file".into());
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_BYTES {
        return Err(format!("larger than {MAX_BYTES} bytes"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("snodo-config-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    async fn only_a_regular_file_up_to_max_bytes_is_read() {
        let dir = dir("read");
        let path = dir.join("proxy.toml");
        let file = ConfigFile::new(path.clone());
        assert!(file.read().await.is_err(), "no file yet");
        std::fs::write(&path, vec![b'#'; MAX_BYTES as usize + 1]).unwrap();
        let e = file.read().await.unwrap_err();
        assert_eq!(e, "larger than 1048576 bytes");
        std::fs::write(&path, "# fine\n").unwrap();
        assert_eq!(file.read().await.unwrap(), "# fine\n");
        let e = ConfigFile::new(dir.clone()).read().await.unwrap_err();
        assert_eq!(e, "not a regular file");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_slow_read_fails_in_time_and_no_second_read_starts_beside_it() {
        let file = ConfigFile::new(PathBuf::from("slow.toml"));
        let slow: fn(&Path) -> Result<String, String> = |_| {
            std::thread::sleep(Duration::from_millis(300));
            Ok("late".into())
        };
        let e = file
            .read_with(Duration::from_millis(50), slow)
            .await
            .unwrap_err();
        assert_eq!(e, "not read within 0.05 s");
        let e = file.read_with(READ_TIMEOUT, slow).await.unwrap_err();
        assert_eq!(e, "the last read of the file has not ended");
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(file.read_with(READ_TIMEOUT, slow).await.unwrap(), "late");
    }
}
