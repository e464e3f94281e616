package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// NewCmdDocs returns the docs command, which writes the command reference
// as man pages or Markdown.
func NewCmdDocs(stdout io.Writer) *cobra.Command {
	var man, markdown string
	c := &cobra.Command{
		Use:   "docs (--man DIR | --markdown DIR)",
		Short: "Write the command reference as man pages or Markdown files",
		Example: `  graphdiff docs --man /usr/local/share/man/man1
  graphdiff docs --markdown docs/`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if (man == "") == (markdown == "") {
				return &usageError{err: fmt.Errorf("give one of --man DIR or --markdown DIR"), help: c.CommandPath()}
			}
			root := c.Root()
			root.DisableAutoGenTag = true // reproducible files: no generation date
			dir := man + markdown
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("docs: %w", err)
			}
			var err error
			if man != "" {
				err = doc.GenManTree(root, &doc.GenManHeader{Title: "GRAPHDIFF", Section: "1", Source: "graphdiff " + versionString()}, dir)
			} else {
				err = doc.GenMarkdownTree(root, dir)
			}
			if err != nil {
				return fmt.Errorf("docs: %w", err)
			}
			_, err = fmt.Fprintf(stdout, "wrote the command reference to %s\n", dir)
			return err
		},
	}
	c.Flags().StringVar(&man, "man", "", "write man pages (section 1) to DIR")
	c.Flags().StringVar(&markdown, "markdown", "", "write Markdown files to DIR")
	_ = c.MarkFlagDirname("man")
	_ = c.MarkFlagDirname("markdown")
	return c
}
