package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/graphdiff/graphdiff/report"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// writeDocs writes the command reference of root to dir, as man pages or
// Markdown. The files are made in a temporary directory first and each is
// then written into dir as a report is (report.WriteFile): whole or not at
// all, and never through a symbolic link, a device or a named pipe that
// stands at its name, which would write somewhere else.
func writeDocs(root *cobra.Command, dir string, man bool) error {
	tmp, err := os.MkdirTemp("", "graphdiff-docs-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if man {
		err = doc.GenManTree(root, &doc.GenManHeader{Title: "GRAPHDIFF", Section: "1", Source: "graphdiff " + versionString()}, tmp)
	} else {
		err = doc.GenMarkdownTree(root, tmp)
	}
	if err != nil {
		return err
	}
	files, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(tmp, f.Name()))
		if err != nil {
			return err
		}
		if err := report.WriteFile(filepath.Join(dir, f.Name()), func(w io.Writer) error {
			_, err := w.Write(data)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

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
			if err := writeDocs(root, dir, man != ""); err != nil {
				return fmt.Errorf("docs: %w", err)
			}
			_, err := fmt.Fprintf(stdout, "wrote the command reference to %s\n", dir)
			return err
		},
	}
	c.Flags().StringVar(&man, "man", "", "write man pages (section 1) to DIR")
	c.Flags().StringVar(&markdown, "markdown", "", "write Markdown files to DIR")
	_ = c.MarkFlagDirname("man")
	_ = c.MarkFlagDirname("markdown")
	return c
}
