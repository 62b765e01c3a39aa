//go:build !linux && !darwin

package pathid

// dirID is the plain file identity where no birth time is at hand.
func dirID(p string) (string, error) {
	id, err := FileID(p)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}
