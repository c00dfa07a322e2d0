package helper

import "github.com/kubetab/kubetab/core/scheduler/framework"

// DefaultNormalizeScore scales scores so the highest becomes maxPriority
// (upstream: plugins/helper/normalize_score.go):
//
//	score = maxPriority × score / max(scores)
//
// With reverse, the scale is turned around (maxPriority - that), so the
// lowest raw score gets the most: TaintToleration counts untolerated
// PreferNoSchedule taints, and fewer is better. When every score is 0,
// reverse gives everyone maxPriority and otherwise nothing changes.
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores framework.NodeScoreList) *framework.Status {
	var maxCount int64
	for i := range scores {
		if scores[i].Score > maxCount {
			maxCount = scores[i].Score
		}
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = maxPriority
			}
		}
		return nil
	}
	for i := range scores {
		score := maxPriority * scores[i].Score / maxCount
		if reverse {
			score = maxPriority - score
		}
		scores[i].Score = score
	}
	return nil
}
