// Package layout has no code of its own: its test enforces the import rules of
// the design (which package may depend on which), so the architecture cannot
// drift silently. It must never be imported.
package layout
