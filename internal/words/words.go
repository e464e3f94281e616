// Package words holds the small helpers that put numbers into English.
package words

import "fmt"

// Plural says "1 tensor" or "3 tensors".
func Plural(n int, word string) string {
	return fmt.Sprintf("%d %s", n, Noun(n, word))
}

// Noun says "tensor" for one and "tensors" for any other count.
func Noun(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
