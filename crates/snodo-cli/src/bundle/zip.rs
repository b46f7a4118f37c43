//! A ZIP archive of stored (uncompressed) entries: what an MCP Bundle is.
//! Enough of the format (APPNOTE 6.3) for a few files below 4 GiB: local
//! headers, the central directory with Unix modes, the end record.

/// One file to archive.
pub(crate) struct Entry {
    /// Its path in the archive, `/`-separated.
    pub(crate) name: String,
    /// Its Unix mode (`0o100644`, `0o100755`).
    pub(crate) mode: u32,
    pub(crate) bytes: Vec<u8>,
}

/// The CRC-32 (IEEE) of `bytes`.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The archive of `entries`; an entry or an archive past the format's
/// 32-bit sizes, or more than 65 535 entries, is refused.
pub(crate) fn archive(entries: &[Entry]) -> Result<Vec<u8>, String> {
    let too_big = |what: &str| format!("{what} is too large for a ZIP archive without ZIP64");
    let count = u16::try_from(entries.len()).map_err(|_| too_big("the file count"))?;
    let mut out = Vec::new();
    let mut central = Vec::new();
    for entry in entries {
        let size = u32::try_from(entry.bytes.len()).map_err(|_| too_big(&entry.name))?;
        let name_len = u16::try_from(entry.name.len()).map_err(|_| too_big(&entry.name))?;
        let offset = u32::try_from(out.len()).map_err(|_| too_big("the archive"))?;
        let crc = crc32(&entry.bytes);
        // Local file header: version 2.0, UTF-8 names (bit 11), stored,
        // 1980-01-01 00:00 (a fixed time: the same inputs, the same bytes).
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes());
        out.extend_from_slice(&0x0800u16.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&0x0021u16.to_le_bytes());
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&name_len.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(entry.name.as_bytes());
        out.extend_from_slice(&entry.bytes);
        // Central directory header: made by Unix (3), the mode in the high
        // half of the external attributes.
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&((3u16 << 8) | 20).to_le_bytes());
        central.extend_from_slice(&20u16.to_le_bytes());
        central.extend_from_slice(&0x0800u16.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&0x0021u16.to_le_bytes());
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&name_len.to_le_bytes());
        central.extend_from_slice(&[0; 8]);
        central.extend_from_slice(&(entry.mode << 16).to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(entry.name.as_bytes());
    }
    let central_offset = u32::try_from(out.len()).map_err(|_| too_big("the archive"))?;
    let central_size = u32::try_from(central.len()).map_err(|_| too_big("the archive"))?;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&central_size.to_le_bytes());
    out.extend_from_slice(&central_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_the_ieee_one() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn python_reads_the_archive_back() {
        let entries = [
            Entry {
                name: "manifest.json".into(),
                mode: 0o100644,
                bytes: b"{}".to_vec(),
            },
            Entry {
                name: "server/run".into(),
                mode: 0o100755,
                bytes: b"#!/bin/sh\n".to_vec(),
            },
        ];
        let bytes = archive(&entries).unwrap();
        let path = std::env::temp_dir().join(format!("snodo-zip-{}.zip", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let script = "import sys, zipfile\n\
            z = zipfile.ZipFile(sys.argv[1])\n\
            assert z.testzip() is None\n\
            for i in z.infolist(): print(i.filename, oct(i.external_attr >> 16), z.read(i).decode())";
        let out = std::process::Command::new("python3")
            .args(["-c", script])
            .arg(&path)
            .output()
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            "manifest.json 0o100644 {}\nserver/run 0o100755 #!/bin/sh\n\n"
        );
    }
}
