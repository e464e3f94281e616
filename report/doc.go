// Package report renders finished results: inspections now, comparisons
// and curve analyses as they are added. Renderers take result values and
// a writer; they compute nothing and decide no exit status.
//
// Text output is for people: aligned columns, six significant digits, "-"
// where a statistic does not exist (the mean of a tensor with no finite
// element). JSON output is for programs: field names are a stable
// contract, numbers are exact (shortest round-trip form), and a statistic
// that does not exist is null rather than a NaN that JSON cannot carry.
package report
