package check

import (
	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/loaders"
)

// Curves reads the loss curves at pathA (the reference) and pathB (files,
// or run directories holding one) and analyses them with the given
// settings. It fails when either curve cannot be read.
func Curves(pathA, pathB string, read loaders.CurveOptions, analysis curve.Options) (*curve.Result, error) {
	ca, err := loaders.ReadCurve(pathA, read)
	if err != nil {
		return nil, err
	}
	cb, err := loaders.ReadCurve(pathB, read)
	if err != nil {
		return nil, err
	}
	return curve.Analyze(ca, cb, analysis), nil
}
