//! Boot-image manifests: the identity of a firmware ELF, read from the ELF.
//!
//! The build id is the linker's GNU build-id note (a hash of the linked
//! image) — the same bytes the firmware prints in its boot banner. Board
//! name, config hash and version come from the `.clio_manifest` section the
//! firmware build writes from the board config.

use object::{Object, ObjectSection, ObjectSegment};

use crate::FwlogError;

/// Section holding the GNU build-id note.
const BUILD_ID_SECTION: &str = ".note.gnu.build-id";
/// Section holding `key=value` lines written by the firmware build.
const MANIFEST_SECTION: &str = ".clio_manifest";
/// ELF note type of a GNU build id.
const NT_GNU_BUILD_ID: u32 = 3;

/// Identity of a boot image, as written to `manifest.json`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImageManifest {
    /// Path of the ELF, as given when the manifest was made.
    pub elf: String,
    /// Bytes the loader writes to memory (file-backed part of the loadable segments).
    pub size: u64,
    /// Bytes the image occupies once running (loadable segments with `.bss` and stacks).
    pub mem_size: u64,
    /// Entry point address.
    pub entry: u64,
    /// Linker build id, lowercase hex.
    pub build_id: String,
    /// Hash of the resolved board config the image was built for, hex.
    pub config_hash: String,
    /// Board name from the config.
    pub board: String,
    /// Firmware crate version.
    pub version: String,
}

impl ImageManifest {
    /// Reads the manifest of the ELF in `elf`; `name` is recorded as its path
    /// and labels errors.
    pub fn from_elf(name: &str, elf: &[u8]) -> Result<Self, FwlogError> {
        let file = object::File::parse(elf).map_err(|e| FwlogError::NotElf {
            file: name.to_string(),
            reason: e.to_string(),
        })?;
        let section = |section: &'static str| -> Result<&[u8], FwlogError> {
            let s = file
                .section_by_name(section)
                .ok_or_else(|| FwlogError::MissingSection {
                    file: name.to_string(),
                    section,
                })?;
            s.data().map_err(|e| FwlogError::BadSection {
                file: name.to_string(),
                section,
                reason: e.to_string(),
            })
        };
        let bad = |section: &'static str, reason: String| FwlogError::BadSection {
            file: name.to_string(),
            section,
            reason,
        };

        let build_id = parse_build_id_note(section(BUILD_ID_SECTION)?, file.is_little_endian())
            .map_err(|r| bad(BUILD_ID_SECTION, r))?;
        let text = std::str::from_utf8(section(MANIFEST_SECTION)?)
            .map_err(|e| bad(MANIFEST_SECTION, format!("not UTF-8: {e}")))?;
        let get = |key: &str| -> Result<String, FwlogError> {
            text.lines()
                .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
                .map(str::to_string)
                .ok_or_else(|| bad(MANIFEST_SECTION, format!("no `{key}` entry")))
        };

        let (mut size, mut mem_size) = (0u64, 0u64);
        for seg in file.segments() {
            size += seg.file_range().1;
            mem_size += seg.size();
        }
        Ok(Self {
            elf: name.to_string(),
            size,
            mem_size,
            entry: file.entry(),
            build_id,
            config_hash: get("config_hash")?,
            board: get("board")?,
            version: get("version")?,
        })
    }
}

/// Build id (lowercase hex) from a GNU build-id note section.
fn parse_build_id_note(note: &[u8], little_endian: bool) -> Result<String, String> {
    let word = |i: usize| -> Result<u32, String> {
        let b: [u8; 4] = note
            .get(4 * i..4 * i + 4)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| format!("note is {} bytes, too short for its header", note.len()))?;
        Ok(if little_endian {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    };
    let (namesz, descsz, kind) = (word(0)? as usize, word(1)? as usize, word(2)?);
    if kind != NT_GNU_BUILD_ID {
        return Err(format!(
            "note type {kind}, expected {NT_GNU_BUILD_ID} (NT_GNU_BUILD_ID)"
        ));
    }
    if namesz != 4 || note.get(12..16) != Some(b"GNU\0".as_slice()) {
        return Err("note owner is not \"GNU\"".to_string());
    }
    let desc = note.get(16..16 + descsz).ok_or_else(|| {
        format!(
            "note declares {descsz} id bytes but is {} bytes",
            note.len()
        )
    })?;
    if desc.is_empty() {
        return Err("empty build id".to_string());
    }
    Ok(desc.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(kind: u32, owner: &[u8; 4], desc: &[u8]) -> Vec<u8> {
        let mut n = Vec::new();
        n.extend_from_slice(&4u32.to_le_bytes());
        n.extend_from_slice(&(desc.len() as u32).to_le_bytes());
        n.extend_from_slice(&kind.to_le_bytes());
        n.extend_from_slice(owner);
        n.extend_from_slice(desc);
        n
    }

    #[test]
    fn build_id_note_parses_to_hex() {
        let n = note(3, b"GNU\0", &[0xde, 0xad, 0x01]);
        assert_eq!(parse_build_id_note(&n, true).unwrap(), "dead01");
    }

    #[test]
    fn build_id_note_rejects_wrong_type_owner_and_length() {
        assert!(parse_build_id_note(&note(1, b"GNU\0", &[1]), true)
            .unwrap_err()
            .contains("note type 1"));
        assert!(parse_build_id_note(&note(3, b"XYZ\0", &[1]), true)
            .unwrap_err()
            .contains("owner"));
        let mut short = note(3, b"GNU\0", &[1, 2, 3, 4]);
        short.truncate(18);
        assert!(parse_build_id_note(&short, true)
            .unwrap_err()
            .contains("declares 4"));
        assert!(parse_build_id_note(&[0; 5], true)
            .unwrap_err()
            .contains("too short"));
        assert!(parse_build_id_note(&note(3, b"GNU\0", &[]), true)
            .unwrap_err()
            .contains("empty"));
    }
}
