//go:build windows

package pathid

import (
	"encoding/binary"
	"io/fs"
	"unsafe"

	"golang.org/x/sys/windows"
)

// fileIDInfo is FILE_ID_INFO: a 64-bit volume serial and a 128-bit file id
// (ReFS needs all 128 bits; NTFS uses the low 64).
type fileIDInfo struct {
	VolumeSerialNumber uint64
	FileID             [16]byte
}

func fileID(p string) (ID, error) {
	h, err := openForQuery(p)
	if err != nil {
		return ID{}, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer windows.CloseHandle(h)
	var info fileIDInfo
	err = windows.GetFileInformationByHandleEx(h, windows.FileIdInfo, (*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	if err == nil {
		return ID{
			Dev:   info.VolumeSerialNumber,
			Ino:   binary.LittleEndian.Uint64(info.FileID[:8]),
			InoHi: binary.LittleEndian.Uint64(info.FileID[8:]),
		}, nil
	}
	// Before Windows 8 only the 64-bit index exists.
	var bh windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &bh); err != nil {
		return ID{}, &fs.PathError{Op: "fileid", Path: p, Err: err}
	}
	return ID{Dev: uint64(bh.VolumeSerialNumber), Ino: uint64(bh.FileIndexHigh)<<32 | uint64(bh.FileIndexLow)}, nil
}

// IDOf reports false on Windows: a FileInfo does not carry the file id.
// Use FileID.
func IDOf(fs.FileInfo) (ID, bool) { return ID{}, false }
