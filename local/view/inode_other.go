//go:build !unix

package view

import "io/fs"

// inode is unknown here; the pointer's size and time still change with
// every publication (it is rewritten by rename with new content).
func inode(fs.FileInfo) uint64 { return 0 }

type fileIdent struct {
	size  int64
	mtime int64
}

func identOf(fi fs.FileInfo) fileIdent { return fileIdent{fi.Size(), fi.ModTime().UnixNano()} }
