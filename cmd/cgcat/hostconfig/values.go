package hostconfig

import (
	"math"
	"reflect"
	"time"
)

// equalValue compares decoded TOML/JSON values (maps, slices, scalars). It
// differs from reflect.DeepEqual in two ways that matter for "nothing else
// changed": NaN equals NaN, and times are equal when they denote the same
// instant with the same offset (each parse makes its own *time.Location).
func equalValue(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && equalMaps(x, y)
	case []any:
		y, ok := b.([]any)
		return ok && equalSlices(x, y)
	case []map[string]any:
		y, ok := b.([]map[string]any)
		return ok && equalSlices(x, y)
	case float64:
		y, ok := b.(float64)
		return ok && equalFloats(x, y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && equalTimes(x, y)
	}
	return reflect.DeepEqual(a, b)
}

func equalMaps(x, y map[string]any) bool {
	if len(x) != len(y) {
		return false
	}
	for k, xv := range x {
		yv, ok := y[k]
		if !ok || !equalValue(xv, yv) {
			return false
		}
	}
	return true
}

func equalSlices[T any](x, y []T) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !equalValue(x[i], y[i]) {
			return false
		}
	}
	return true
}

// equalFloats: NaN equals NaN, and 0 is not -0.
func equalFloats(x, y float64) bool {
	if math.IsNaN(x) && math.IsNaN(y) {
		return true
	}
	return x == y && math.Signbit(x) == math.Signbit(y)
}

// equalTimes: the same instant with the same offset.
func equalTimes(x, y time.Time) bool {
	_, xo := x.Zone()
	_, yo := y.Zone()
	return x.Equal(y) && xo == yo
}
