package nofollow

import (
	"golang.org/x/sys/unix"

	"github.com/cgcat/cgcat/local/pathid"
)

// Times is what an open directory's own inode says about when it last
// changed, read from the descriptor (fstat): its identity, its
// modification time (moves when an entry is added, removed or renamed) and
// its status-change time (moves with that and also with chmod, chown, ACLs
// and utimes), both in nanoseconds since the epoch as the file system
// keeps them.
type Times struct {
	ID    pathid.ID
	Mtime int64
	Ctime int64
}

// Times reads d's identity and change times from the open descriptor. It
// also sets what ID returns, so a later ID costs nothing.
func (d *Dir) Times() (Times, error) {
	var st unix.Stat_t
	if err := fstat(d.fd, &st); err != nil {
		return Times{}, pathErr("stat", d.path, err)
	}
	t := Times{
		ID:    pathid.ID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)},
		Mtime: st.Mtim.Nano(),
		Ctime: st.Ctim.Nano(),
	}
	d.id, d.hasID = t.ID, true
	return t, nil
}

// FSType is the type of the file system d lives on (statfs f_type, e.g.
// 0xEF53 for ext2/3/4).
func (d *Dir) FSType() (int64, error) {
	var st unix.Statfs_t
	for {
		err := unix.Fstatfs(d.fd, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, pathErr("statfs", d.path, err)
		}
		return int64(st.Type), nil
	}
}

// statTimes are st's modification and status-change times (Info).
func statTimes(st *unix.Stat_t) (mtime, ctime int64) { return st.Mtim.Nano(), st.Ctim.Nano() }
