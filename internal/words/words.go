// Package words holds the small helpers that put numbers into English.
package words

import "fmt"

// Plural says "1 tensor" or "3 tensors".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
