//go:build !race

package httpload_test

const raceEnabled = false
