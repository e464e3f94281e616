package loaders

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// checkPickleLengths walks the opcodes of a pickle stream and refuses one
// whose length-prefixed argument (a string, bytes, a long integer, a
// frame) claims more bytes than the stream holds: the unpickler sizes its
// buffer from the claim before reading, so a few bytes could ask for
// terabytes. Opcodes are those of pickle protocols 0 to 5; the scan stops
// at STOP or at an opcode it does not know, which the unpickler refuses.
func checkPickleLengths(data []byte) error {
	fixed := map[byte]int{
		'J': 4, 'K': 1, 'M': 2, 'G': 8, 'h': 1, 'j': 4, 'q': 1, 'r': 4,
		0x82: 1, 0x83: 2, 0x84: 4, 0x80: 1,
	}
	prefixed := map[byte]int{ // opcode -> size of its little-endian length
		'U': 1, 'C': 1, 0x8c: 1, 0x8a: 1,
		'T': 4, 'B': 4, 'X': 4, 0x8b: 4,
		0x8d: 8, 0x8e: 8, 0x96: 8,
	}
	lines := map[byte]int{'I': 1, 'L': 1, 'F': 1, 'S': 1, 'V': 1, 'P': 1, 'g': 1, 'p': 1, 'c': 2, 'i': 2}
	bare := "(.0125Nba]})lstdueo\x85\x86\x87\x88\x89\x81\x92\x8f\x90\x91\x93\x94Q\x97\x98R"
	for pos := 0; pos < len(data); {
		op := data[pos]
		pos++
		left := uint64(len(data) - pos)
		switch {
		case op == '.':
			return nil
		case op == 0x95: // FRAME: an 8-byte length, then the frame's opcodes
			if left < 8 {
				return fmt.Errorf("pickle frame length cut short")
			}
			if n := binary.LittleEndian.Uint64(data[pos:]); n > left-8 {
				return fmt.Errorf("pickle frame claims %d bytes, the stream holds %d", n, left-8)
			}
			pos += 8
		case fixed[op] > 0:
			pos += fixed[op]
		case prefixed[op] > 0:
			w := prefixed[op]
			if left < uint64(w) {
				return fmt.Errorf("pickle opcode 0x%02x: length cut short", op)
			}
			var n uint64
			switch w {
			case 1:
				n = uint64(data[pos])
			case 4:
				n = uint64(binary.LittleEndian.Uint32(data[pos:]))
			case 8:
				n = binary.LittleEndian.Uint64(data[pos:])
			}
			if n > left-uint64(w) {
				return fmt.Errorf("pickle opcode 0x%02x claims %d bytes, the stream holds %d", op, n, left-uint64(w))
			}
			pos += w + int(n)
		case lines[op] > 0:
			for range lines[op] {
				i := bytes.IndexByte(data[pos:], '\n')
				if i < 0 {
					return fmt.Errorf("pickle opcode %q: line not terminated", op)
				}
				pos += i + 1
			}
		case bytes.IndexByte([]byte(bare), op) >= 0:
		default:
			return nil // unknown: the unpickler says so
		}
	}
	return nil
}
