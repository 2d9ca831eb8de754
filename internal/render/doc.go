// Package render draws what the report pages show people: durations and
// numbers formatted for reading, HTML tables and badges, the pages' one style
// sheet, and SVG charts (axes with unit-aware ticks, a y range that outliers
// do not stretch, labelled points, legends outside the plot area, reference
// lines whose labels never overlap).
//
// The calibration report and the sweep pages (internal/report) and the
// A/B comparison (internal/abtest) draw with it, so a chart reads the same
// on every page. It is a leaf: it knows no trace, sweep or simulator,
// takes plain numbers and strings, and writes only to the strings.Builder
// or io.Writer it is given.
package render
