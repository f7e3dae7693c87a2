//! ISO-2: role tool whitelists, as in seed 003, configurable.

use std::collections::BTreeMap;

/// Tools a role may use; `None` means every tool (the `general` role).
pub type ToolWhitelist = Option<Vec<String>>;

/// The role used when a delegation names none.
pub const GENERAL_ROLE: &str = "general";

/// The seed's `ROLE_TOOL_WHITELIST`.
pub fn default_role_whitelists() -> BTreeMap<String, ToolWhitelist> {
    let list = |tools: &[&str]| Some(tools.iter().map(|t| (*t).to_owned()).collect());
    BTreeMap::from([
        ("code-review".to_owned(), list(&["read_file", "search_files", "list_dir"])),
        ("code-generation".to_owned(), list(&["read_file", "write_file", "edit_file", "run_shell", "search_files", "list_dir"])),
        ("data-analysis".to_owned(), list(&["read_file", "search_files", "list_dir", "run_code", "run_shell"])),
        ("document".to_owned(), list(&["read_file", "write_file", "search_files", "list_dir"])),
        ("testing".to_owned(), list(&["read_file", "write_file", "edit_file", "run_shell", "search_files", "list_dir", "run_code"])),
        (GENERAL_ROLE.to_owned(), None),
    ])
}
