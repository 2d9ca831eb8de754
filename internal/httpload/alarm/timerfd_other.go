//go:build !linux

package alarm

import "time"

// wakeFD is a no-op outside Linux: Timers are ordinary Go timers there.
type wakeFD struct{}

func openWakeFD() wakeFD         { return wakeFD{} }
func (wakeFD) arm(time.Duration) {}
func (wakeFD) close() error      { return nil }
func (wakeFD) precise() bool     { return false }
