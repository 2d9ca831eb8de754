package workload

import (
	"math/rand/v2"
)

// Multimodal makes a client's input the sum of its parts (BLIS multimodal,
// docs/workload.md §3): text tokens (Text, else the client's input
// distribution), then for images, audio and video, count × tokens per item
// (a modality without its token distribution is absent; without a count
// distribution it counts 1). The simulator and observe see the total as
// prompt tokens; the trace's image, audio and video columns keep the parts.
type Multimodal struct {
	Text              *Distribution
	Image, ImageCount *Distribution
	Audio, AudioCount *Distribution
	Video, VideoCount *Distribution
}

type rawMultimodal struct {
	Text       *rawDist `yaml:"text_distribution"`
	Image      *rawDist `yaml:"image_distribution"`
	ImageCount *rawDist `yaml:"image_count_distribution"`
	Audio      *rawDist `yaml:"audio_distribution"`
	AudioCount *rawDist `yaml:"audio_count_distribution"`
	Video      *rawDist `yaml:"video_distribution"`
	VideoCount *rawDist `yaml:"video_count_distribution"`
}

func decodeMultimodal(r *rawMultimodal) *Multimodal {
	return &Multimodal{Text: distOf(r.Text), Image: distOf(r.Image), ImageCount: distOf(r.ImageCount),
		Audio: distOf(r.Audio), AudioCount: distOf(r.AudioCount), Video: distOf(r.Video), VideoCount: distOf(r.VideoCount)}
}

// mmSampler draws a multimodal input.
type mmSampler struct {
	text  *lengthSampler // nil: the client's input distribution
	parts [3]struct{ tokens, count *lengthSampler }
}

func newMMSampler(m *Multimodal, path, baseDir string) (*mmSampler, *Error) {
	s := &mmSampler{}
	var err *Error
	if m.Text != nil {
		if s.text, err = newLengthSampler(path+".text_distribution", m.Text, baseDir); err != nil {
			return nil, err
		}
	}
	for i, p := range []struct {
		name          string
		tokens, count *Distribution
	}{{"image", m.Image, m.ImageCount}, {"audio", m.Audio, m.AudioCount}, {"video", m.Video, m.VideoCount}} {
		if p.tokens == nil {
			if p.count != nil {
				return nil, &Error{Path: path + "." + p.name + "_count_distribution", Msg: "needs " + p.name + "_distribution"}
			}
			continue
		}
		if s.parts[i].tokens, err = newLengthSampler(path+"."+p.name+"_distribution", p.tokens, baseDir); err != nil {
			return nil, err
		}
		if p.count != nil {
			if s.parts[i].count, err = newLengthSampler(path+"."+p.name+"_count_distribution", p.count, baseDir); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// sample draws text tokens, then each modality's count and tokens per item,
// and returns the whole input (at most MaxSampleTokens) and the tokens of
// each modality.
func (s *mmSampler) sample(r *rand.Rand, input *lengthSampler) (total int, parts [3]int) {
	text := s.text
	if text == nil {
		text = input
	}
	total = text.sample(r)
	for i, p := range s.parts {
		if p.tokens == nil {
			continue
		}
		n := 1
		if p.count != nil {
			n = p.count.sample(r)
		}
		per := p.tokens.sample(r)
		parts[i] = min(n*per, MaxSampleTokens)
		total = min(total+parts[i], MaxSampleTokens)
	}
	return total, parts
}
