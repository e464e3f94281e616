package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/graphdiff/graphdiff/loaders"
)

// loadFlags are the flags that say how to read files, shared by every
// command that reads dumps.
type loadFlags struct {
	v2     string
	float8 string
}

func (f *loadFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.v2, "v2-dtype", "bfloat16",
		"how to read numpy's raw 2-byte dtype '<V2' (what ml_dtypes.bfloat16 saves as): bfloat16, float16, int16, uint16")
	c.Flags().StringVar(&f.float8, "float8", "",
		"float8 format of numpy's raw 1-byte dtype '<V1' (what ml_dtypes.float8_e4m3fn saves as): e4m3fn or e5m2")
	_ = c.RegisterFlagCompletionFunc("v2-dtype", cobra.FixedCompletions(
		[]string{"bfloat16", "float16", "int16", "uint16"}, cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("float8", cobra.FixedCompletions(
		[]string{"e4m3fn", "e5m2"}, cobra.ShellCompDirectiveNoFileComp))
}

// options turns the flags into loader options.
func (f *loadFlags) options() (loaders.Options, error) {
	var o loaders.Options
	var err error
	if o.V2, err = loaders.ParseDType(f.v2); err != nil {
		return o, &usageError{err: fmt.Errorf("--v2-dtype: %w", err)}
	}
	if f.float8 != "" {
		if o.V1, err = loaders.ParseFloat8(f.float8); err != nil {
			return o, &usageError{err: fmt.Errorf("--float8: %w", err)}
		}
	}
	if err := o.Check(); err != nil {
		return o, &usageError{err: fmt.Errorf("--v2-dtype: %w", err)}
	}
	return o, nil
}
