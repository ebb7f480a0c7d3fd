package reports

import (
	"fmt"
	"slices"
	"strconv"
)

// Geometry of a chain drawing: one row per site, one column per member.
const (
	chainLeftPx    = 70.0 // site labels
	chainColumnPx  = 84.0
	chainBoxPx     = 72.0
	chainBoxHighPx = 46.0
	chainRowPx     = 66.0
	chainTopPx     = 8.0
	refTailChars   = 8 // a member's ref is drawn as its last characters
)

// chainView is one chain ready for the template.
type chainView struct {
	Handle   string
	Length   int
	Width    string
	Height   string
	Rows     []laneView
	Members  []memberView
	Hops     []hopView
	Problems []string // drawn in red below the chain
}

type memberView struct {
	X, Y, W, H      string
	TextX           string
	Line1Y, Line2Y  string
	Line3Y          string
	Generation, Ref string
	State, Class    string
	Tip             string
}

// hopView is the arrow from one member to its successor.
type hopView struct {
	Path, Class string
}

// buildChain draws a chain as hops between site rows. Its problems -- more
// than one active member, consecutive members on one site, generations out
// of order -- are drawn in red and listed, since they are invariant breaks a
// reader must not miss.
func buildChain(result Result, chain Chain) chainView {
	var sites []string
	for _, m := range chain.Members {
		if !slices.Contains(sites, m.Site) {
			sites = append(sites, m.Site)
		}
	}
	slices.SortStableFunc(sites, func(a, b string) int { return laneRank(a) - laneRank(b) })
	view := chainView{Handle: chain.Handle, Length: len(chain.Members),
		Width:  px(chainLeftPx + float64(max(len(chain.Members), 1))*chainColumnPx + 8),
		Height: px(chainTopPx*2 + float64(max(len(sites), 1))*chainRowPx)}
	for i, site := range sites {
		top := chainTopPx + float64(i)*chainRowPx
		view.Rows = append(view.Rows, laneView{Name: site, Y: px(top), Height: px(chainRowPx - 6),
			LabelY: px(top + chainRowPx/2), MidY: px(top + chainRowPx/2 - 3)})
	}
	active := 0
	for i, m := range chain.Members {
		row := slices.Index(sites, m.Site)
		x := chainLeftPx + float64(i)*chainColumnPx
		y := chainTopPx + float64(row)*chainRowPx + (chainRowPx-6-chainBoxHighPx)/2
		if m.State == "Active" {
			active++
		}
		tip := fmt.Sprintf("generation %d on %s: %s\n%s", m.Generation, m.Site, m.State, m.Ref)
		if !m.LastSync.IsZero() {
			tip += "\nlast sync " + formatOffset(offset(result, m.LastSync))
		}
		view.Members = append(view.Members, memberView{X: px(x), Y: px(y), W: px(chainBoxPx), H: px(chainBoxHighPx),
			TextX: px(x + chainBoxPx/2), Line1Y: px(y + 14), Line2Y: px(y + 27),
			Generation: "g" + strconv.FormatUint(uint64(m.Generation), 10), Ref: refTail(m.Ref),
			State: m.State, Class: "member member-" + stateClass(m.State), Tip: tip})
		if i == 0 {
			continue
		}
		previous := chain.Members[i-1]
		prevRow := slices.Index(sites, previous.Site)
		hop := hopView{Class: "hop", Path: hopPath(x-chainColumnPx+chainBoxPx, x, prevRow, row)}
		if previous.Site == m.Site {
			hop.Class = "hop hop-bad"
			view.Problems = append(view.Problems, fmt.Sprintf("hop %d stays on %s: hops must alternate sites", i, m.Site))
		}
		if m.Generation != previous.Generation+1 {
			view.Problems = append(view.Problems, fmt.Sprintf("generation %d follows %d", m.Generation, previous.Generation))
		}
		view.Hops = append(view.Hops, hop)
	}
	if active > 1 {
		view.Problems = append(view.Problems, fmt.Sprintf("%d members are Active: at most one may be", active))
	}
	return view
}

// hopPath is the line from the right edge of one box to the left edge of
// the next, between their rows; the template puts the arrowhead on its end.
func hopPath(fromX, toX float64, fromRow, toRow int) string {
	rowMid := func(row int) float64 { return chainTopPx + float64(row)*chainRowPx + (chainRowPx-6)/2 }
	return fmt.Sprintf("M%s %sL%s %s", px(fromX), px(rowMid(fromRow)), px(toX-2), px(rowMid(toRow)))
}

// laneRank orders sites as the timeline does: site-a, site-b, hub, others.
func laneRank(site string) int {
	if i := slices.Index(fixedLanes, site); i >= 0 {
		return i
	}
	return len(fixedLanes)
}

// stateClass maps a member's state onto a CSS class suffix.
func stateClass(state string) string {
	switch state {
	case "Active":
		return "active"
	case "Demoted":
		return "demoted"
	case "Tombstone":
		return "tombstone"
	}
	return "other"
}

// refTail shortens a member ref ("<cluster-uuid>:<volume-uuid>") to its
// last characters for the box; the whole ref is in the tooltip.
func refTail(ref string) string {
	runes := []rune(ref)
	if len(runes) <= refTailChars+1 {
		return ref
	}
	return "…" + string(runes[len(runes)-refTailChars:])
}
