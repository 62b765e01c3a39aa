//go:build !linux

package nofollowtest

import (
	"errors"
	"testing"
)

type none struct{}

func (none) Seen() []string { return nil }
func (none) Close()         {}

func watch(string) (none, error) { return none{}, errors.New("inotify is Linux only") }

func selfTest(testing.TB, Witness, string) {}
