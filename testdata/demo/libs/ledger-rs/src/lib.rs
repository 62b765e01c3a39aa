pub fn post_entry() {}
