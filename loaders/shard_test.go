package loaders

import (
	"fmt"
	"testing"
)

func TestParseShard(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"1/1", Shard{1, 1}, true}, {"3/8", Shard{3, 8}, true},
		{"0/2", Shard{}, false}, {"3/2", Shard{}, false}, {"1/0", Shard{}, false},
		{"1", Shard{}, false}, {"a/b", Shard{}, false}, {"", Shard{}, false},
	} {
		got, err := ParseShard(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseShard(%q) = %v, %v", c.in, got, err)
		}
	}
}

// TestShardHolds checks that each pair belongs to exactly one shard, that
// shards are balanced, and that the split is the documented hash (so that
// it stays the same across versions: shards made by two graphdiff builds
// merge).
func TestShardHolds(t *testing.T) {
	t.Parallel()
	const n, pairs = 8, 8000
	counts := make([]int, n)
	for i := range pairs {
		name := fmt.Sprintf("rank_%d/grads/layer%d.weight", i%64, i/64)
		holders := 0
		for s := 1; s <= n; s++ {
			if (Shard{s, n}).Holds(i%50, name) {
				holders++
				counts[s-1]++
			}
		}
		if holders != 1 {
			t.Fatalf("%s: %d shards hold it", name, holders)
		}
	}
	for s, c := range counts {
		if c < pairs/n*9/10 || c > pairs/n*11/10 {
			t.Errorf("shard %d/%d holds %d of %d pairs", s+1, n, c, pairs)
		}
	}
	// The documented key: "STEP/NAME", "-" for no step.
	for _, c := range []struct {
		step  int
		name  string
		shard int
	}{{3, "loss", fnvShard("3/loss", 5)}, {NoStep, "loss", fnvShard("-/loss", 5)}} {
		for s := 1; s <= 5; s++ {
			if got := (Shard{s, 5}).Holds(c.step, c.name); got != (s == c.shard) {
				t.Errorf("shard %d/5 holds (%d, %s): %v", s, c.step, c.name, got)
			}
		}
	}
}

// fnvShard is FNV-1a-64 written out from its definition (offset basis
// 14695981039346656037, prime 1099511628211), as a check on Holds.
func fnvShard(key string, n int) int {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	return int(h%uint64(n)) + 1
}
