//go:build !unix

package view

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
