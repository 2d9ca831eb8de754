package httpload

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
)

// vocabulary is the fixed 100-word list prompts are made of: short, common
// English words that most BPE tokenizers encode as one token each (with
// their leading space), so text length in tokens is close to its word count
// and the measured ratio is stable.
const vocabulary = "the of and to in is it you that was for on are with as his they be at one " +
	"have this from or had by word but what some we can out other were all there when up use " +
	"your how said an each she which do their time if will way about many then them write would " +
	"like so these her long make thing see him two has look more day could go come did number " +
	"sound no most people my over know water than call first who may down side been now find"

// maxCachedPrefixes bounds the prefix cache of a Prompter.
const maxCachedPrefixes = 1024

// Prompter builds synthetic prompt text of a requested length in the
// server's tokens, from a measured tokens-per-word ratio. Shared prefixes are
// deterministic in (seed, group): every job of a group gets byte-identical
// prefix text, so the server's prefix cache sees the sharing the workload
// describes. The text unique to a job is deterministic in (seed, job id) and
// differs between jobs from its first word, so unrelated prompts share no
// cacheable prefix. Safe for concurrent use.
type Prompter struct {
	seed          uint64
	tokensPerWord float64
	words         []string

	mu       sync.Mutex
	prefixes map[string]string // group → longest prefix text built so far
}

// NewPrompter returns a Prompter. tokensPerWord is the server's tokens per
// vocabulary word (from Calibrate); it must lie in [0.1, 10].
func NewPrompter(seed int64, tokensPerWord float64) (*Prompter, error) {
	if math.IsNaN(tokensPerWord) || tokensPerWord < 0.1 || tokensPerWord > 10 {
		return nil, fmt.Errorf("httpload: prompter: tokens per word %v outside [0.1, 10]", tokensPerWord)
	}
	return &Prompter{
		seed:          uint64(seed),
		tokensPerWord: tokensPerWord,
		words:         strings.Fields(vocabulary),
		prefixes:      map[string]string{},
	}, nil
}

// TokensPerWord is the ratio the Prompter sizes text with.
func (p *Prompter) TokensPerWord() float64 { return p.tokensPerWord }

// Words is the number of words that make about tokens tokens: tokens/ratio
// rounded, at least 1 when tokens > 0, 0 when tokens ≤ 0.
func (p *Prompter) Words(tokens int) int {
	if tokens <= 0 {
		return 0
	}
	return max(1, int(math.Round(float64(tokens)/p.tokensPerWord)))
}

// Prefix is the shared prefix text of group, about tokens tokens long. A
// shorter prefix of the same group is a word prefix of a longer one.
func (p *Prompter) Prefix(group string, tokens int) string {
	n := p.Words(tokens)
	if n == 0 {
		return ""
	}
	p.mu.Lock()
	cached, ok := p.prefixes[group]
	p.mu.Unlock()
	if ok {
		if s, ok := firstWords(cached, n); ok {
			return s
		}
	}
	h := fnv.New64a()
	h.Write([]byte(group))
	s := p.text(rand.NewPCG(p.seed, h.Sum64()), n)
	p.mu.Lock()
	if len(p.prefixes) < maxCachedPrefixes || ok {
		p.prefixes[group] = s
	}
	p.mu.Unlock()
	return s
}

// Text is text of about tokens tokens unique to job id.
func (p *Prompter) Text(id int64, tokens int) string {
	n := p.Words(tokens)
	if n == 0 {
		return ""
	}
	// The second PCG word is offset so a job stream never equals a group
	// stream by accident of the hash.
	return p.text(rand.NewPCG(p.seed, uint64(id)^0x9e3779b97f4a7c15), n)
}

// Prompt is a job's whole prompt: the group's prefix (when prefixTokens > 0)
// followed by its own text.
func (p *Prompter) Prompt(id int64, group string, prefixTokens, tokens int) string {
	own := p.Text(id, tokens)
	if prefixTokens <= 0 {
		return own
	}
	pre := p.Prefix(group, prefixTokens)
	if own == "" {
		return pre
	}
	return pre + " " + own
}

// hashBlockTag separates the streams of hash-id blocks from those of jobs
// (id ^ 0x9e37…) and groups (FNV of the name), so a block never equals a
// job's or a group's text by accident of the seed.
const hashBlockTag = 0x5851f42d4c957f2d

// Blocks is the head of a prompt of about tokens tokens whose leading
// blocks are named by hash ids (Mooncake's hash_ids, tracev2 ext_hash_ids):
// block i is about blockTokens tokens of text deterministic in (seed,
// hashes[i]), so prompts whose leading hash ids agree share exactly those
// blocks' text, and the server's prefix cache sees the sharing the trace
// recorded. Blocks stop where the prompt ends (the last one may be cut);
// covered is the tokens they stand for, min(len(hashes)·blockTokens,
// tokens). The rest of the prompt is the caller's (Text).
func (p *Prompter) Blocks(hashes []int64, blockTokens, tokens int) (text string, covered int) {
	if blockTokens <= 0 {
		return "", 0
	}
	var b strings.Builder
	for _, h := range hashes {
		if covered >= tokens {
			break
		}
		// A whole block always has the same words, whatever the row's
		// length, so rows sharing it share all of it.
		n := min(blockTokens, tokens-covered)
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p.text(rand.NewPCG(p.seed, uint64(h)^hashBlockTag), p.Words(n)))
		covered += n
	}
	return b.String(), covered
}

func (p *Prompter) text(src rand.Source, n int) string {
	r := rand.New(src)
	var b strings.Builder
	b.Grow(n * 6)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p.words[r.IntN(len(p.words))])
	}
	return b.String()
}

// firstWords returns the first n words of s (space separated), if s has n.
func firstWords(s string, n int) (string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			n--
			if n == 0 {
				return s[:i], true
			}
		}
	}
	return s, n == 1
}

// errNoTokenize reports a server without a usable /tokenize endpoint.
var errNoTokenize = errors.New("no usable /tokenize endpoint")
