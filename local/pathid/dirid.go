package pathid

// DirID is a directory's identity for remembering it over time: its device
// and inode (a Windows file id) and, where the file system records it, its
// birth time. Inode numbers are reused as soon as a directory is deleted;
// with the birth time, a directory made later in the same inode is not
// mistaken for the one remembered. Two spellings of one directory (a bind
// mount, a symlinked parent, a junction) give the same DirID.
func DirID(p string) (string, error) { return dirID(p) }
