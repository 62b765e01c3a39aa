package lease

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestExclusive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "scan.lease")
	a, err := TryAcquire(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryAcquire(p); !errors.Is(err, ErrHeld) {
		t.Fatalf("second acquire: %v, want ErrHeld", err)
	}
	if held, _ := Holder(p); !held {
		t.Fatal("Holder says free while held")
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	b, err := TryAcquire(p)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	b.Release()
}

func TestLiveHolderIsNotStolen(t *testing.T) {
	old := StaleAfter
	StaleAfter = 150 * time.Millisecond
	defer func() { StaleAfter = old }()
	p := filepath.Join(t.TempDir(), "scan.lease")
	a, err := TryAcquire(p)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	time.Sleep(3 * StaleAfter) // the heartbeat keeps it fresh
	if _, err := TryAcquire(p); !errors.Is(err, ErrHeld) {
		t.Fatalf("a live holder's lease was taken: %v", err)
	}
	if a.Lost() {
		t.Fatal("live holder lost its lease")
	}
}

func TestFrozenHolderIsStolen(t *testing.T) {
	old := StaleAfter
	StaleAfter = 100 * time.Millisecond
	defer func() { StaleAfter = old }()
	p := filepath.Join(t.TempDir(), "scan.lease")
	a, err := TryAcquire(p)
	if err != nil {
		t.Fatal(err)
	}
	// Freeze a: stop its heartbeat as SIGSTOP would.
	close(a.stop)
	<-a.done
	a.stop = make(chan struct{})
	a.done = make(chan struct{})
	close(a.done)
	time.Sleep(2 * StaleAfter)
	b, err := TryAcquire(p)
	if err != nil {
		t.Fatalf("a frozen holder's lease must be stealable: %v", err)
	}
	defer b.Release()
	if !a.Lost() {
		t.Fatal("the frozen holder must see that it lost the lease")
	}
	if _, err := TryAcquire(p); !errors.Is(err, ErrHeld) {
		t.Fatalf("the new holder must hold it exclusively: %v", err)
	}
	a.Release()
}

// Under the progress rule the file's mtime is the holder's last progress:
// a holder whose heartbeat runs but whose work does not move is taken
// over once StaleAfter has passed since its last Progress, and Active no
// longer names it.
func TestHolderWithoutProgressIsStolen(t *testing.T) {
	old := StaleAfter
	StaleAfter = 100 * time.Millisecond
	defer func() { StaleAfter = old }()
	p := filepath.Join(t.TempDir(), "scan.lease")
	a, err := TryAcquire(p)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	a.RequireProgress()
	a.Progress()
	for deadline := time.Now().Add(time.Minute); ; {
		b, err := TryAcquire(p)
		if err == nil {
			defer b.Release()
			break
		}
		if !errors.Is(err, ErrHeld) || time.Now().After(deadline) {
			t.Fatalf("a holder without progress kept its lease: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !a.Lost() {
		t.Fatal("the stuck holder must see that it lost the lease")
	}
	if pid, ok := Active(p); !ok || pid != os.Getpid() {
		t.Fatalf("the new holder is not active: %d %v", pid, ok)
	}
}
