package main

import (
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
)

// Charts are drawn with the standard library only: axes, grid lines with
// numeric tick labels (a tiny built-in digit font), the lines, and a legend of
// numbered colour boxes that the report's Markdown names.

// Series is one line of a chart.
type Series struct {
	Name   string
	Color  color.RGBA
	Points [][2]float64 // data coordinates
}

// Axis maps data to pixels.
type Axis struct {
	Min, Max float64
	Log      bool
	Ticks    []float64
	Labels   []string
}

func (a Axis) frac(v float64) float64 {
	if a.Log {
		return (math.Log10(v) - math.Log10(a.Min)) / (math.Log10(a.Max) - math.Log10(a.Min))
	}
	return (v - a.Min) / (a.Max - a.Min)
}

var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
}

// colourNames name the palette in the report.
var colourNames = []string{"blue", "orange", "green", "red", "purple", "brown", "pink", "grey"}

const (
	chartW, chartH = 900, 540
	padL, padR     = 70, 30
	padT, padB     = 30, 50
)

func drawChart(path string, x, y Axis, series []Series) error {
	img := image.NewRGBA(image.Rect(0, 0, chartW, chartH))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	pw, ph := chartW-padL-padR, chartH-padT-padB
	toPx := func(vx, vy float64) (int, int, bool) {
		fx, fy := x.frac(vx), y.frac(vy)
		if math.IsNaN(fx) || math.IsNaN(fy) || math.IsInf(fx, 0) || math.IsInf(fy, 0) {
			return 0, 0, false
		}
		fx, fy = math.Max(0, math.Min(1, fx)), math.Max(0, math.Min(1, fy))
		return padL + int(fx*float64(pw)), padT + ph - int(fy*float64(ph)), true
	}
	grid := color.RGBA{225, 225, 225, 255}
	black := color.RGBA{0, 0, 0, 255}
	for i, t := range x.Ticks {
		px, _, ok := toPx(t, y.Min)
		if !ok {
			continue
		}
		line(img, px, padT, px, padT+ph, grid, 1)
		if i < len(x.Labels) {
			text(img, x.Labels[i], px-textWidth(x.Labels[i])/2, padT+ph+10, black)
		}
	}
	for i, t := range y.Ticks {
		_, py, ok := toPx(x.Min, t)
		if !ok {
			continue
		}
		line(img, padL, py, padL+pw, py, grid, 1)
		if i < len(y.Labels) {
			text(img, y.Labels[i], padL-8-textWidth(y.Labels[i]), py-5, black)
		}
	}
	line(img, padL, padT, padL, padT+ph, black, 2)
	line(img, padL, padT+ph, padL+pw, padT+ph, black, 2)
	for _, s := range series {
		var lx, ly int
		have := false
		for _, p := range s.Points {
			if x.Log && p[0] <= 0 || y.Log && p[1] <= 0 {
				continue
			}
			px, py, ok := toPx(p[0], p[1])
			if !ok {
				continue
			}
			if have {
				line(img, lx, ly, px, py, s.Color, 2)
			} else if len(s.Points) == 1 {
				rect(img, px-3, py-3, px+3, py+3, s.Color)
			}
			lx, ly, have = px, py, true
		}
	}
	// Legend: numbered colour boxes, top left inside the plot.
	for i, s := range series {
		bx, by := padL+12, padT+10+i*20
		rect(img, bx, by, bx+24, by+12, s.Color)
		text(img, itoa(i+1), bx+30, by+1, black)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return png.Encode(f, img)
}

func rect(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	draw.Draw(img, image.Rect(x0, y0, x1, y1), image.NewUniform(c), image.Point{}, draw.Src)
}

// line draws a line of width w (Bresenham, square pen).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA, w int) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		for i := range w {
			for j := range w {
				img.SetRGBA(x0+i, y0+j, c)
			}
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// glyphs is a 3x5 font for tick labels: each row is three bits, top first.
var glyphs = map[rune][5]uint8{
	'0': {7, 5, 5, 5, 7}, '1': {2, 6, 2, 2, 7}, '2': {7, 1, 7, 4, 7}, '3': {7, 1, 7, 1, 7},
	'4': {5, 5, 7, 1, 1}, '5': {7, 4, 7, 1, 7}, '6': {7, 4, 7, 5, 7}, '7': {7, 1, 1, 1, 1},
	'8': {7, 5, 7, 5, 7}, '9': {7, 5, 7, 1, 7}, '.': {0, 0, 0, 0, 2}, '-': {0, 0, 7, 0, 0},
	'k': {4, 5, 6, 5, 5}, '%': {5, 1, 2, 4, 5},
}

const scale = 2

func textWidth(s string) int { return len(s) * 4 * scale }

func text(img *image.RGBA, s string, x, y int, c color.RGBA) {
	for _, r := range s {
		g, ok := glyphs[r]
		if ok {
			for row := range 5 {
				for col := range 3 {
					if g[row]&(4>>col) != 0 {
						rect(img, x+col*scale, y+row*scale, x+(col+1)*scale, y+(row+1)*scale, c)
					}
				}
			}
		}
		x += 4 * scale
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// msAxis is a log axis in milliseconds covering [lo, hi], with decade ticks.
func msAxis(lo, hi float64) Axis {
	lo = math.Pow(10, math.Floor(math.Log10(math.Max(lo, 0.01))))
	hi = math.Pow(10, math.Ceil(math.Log10(math.Max(hi, lo*10))))
	a := Axis{Min: lo, Max: hi, Log: true}
	for v := lo; v <= hi*1.001; v *= 10 {
		a.Ticks = append(a.Ticks, v)
		a.Labels = append(a.Labels, decadeLabel(v))
	}
	return a
}

func decadeLabel(v float64) string {
	switch {
	case v >= 1000:
		return itoa(int(v/1000)) + "k"
	case v >= 1:
		return itoa(int(math.Round(v)))
	}
	s := "."
	for v < 0.1 {
		s += "0"
		v *= 10
	}
	return s + "1"
}

// cdfPoints turns a sorted Dist into CDF points (finite values only).
func cdfPoints(d Dist) [][2]float64 {
	var pts [][2]float64
	n := float64(len(d))
	step := max(1, len(d)/400)
	for i := 0; i < len(d); i += step {
		if math.IsInf(d[i], 0) {
			break
		}
		pts = append(pts, [2]float64{d[i], float64(i+1) / n})
	}
	if k := len(d) - 1; k >= 0 && !math.IsInf(d[k], 0) {
		pts = append(pts, [2]float64{d[k], 1})
	}
	return pts
}

func fracAxis() Axis {
	return Axis{Min: 0, Max: 1, Ticks: []float64{0, .25, .5, .75, 1}, Labels: []string{"0", ".25", ".5", ".75", "1"}}
}

// linAxis covers [0, hi] with about five round ticks.
func linAxis(hi float64) Axis {
	if hi <= 0 {
		hi = 1
	}
	step := math.Pow(10, math.Floor(math.Log10(hi/5)))
	for hi/step > 6 {
		step *= 2
	}
	a := Axis{Min: 0, Max: math.Ceil(hi/step) * step}
	for v := 0.0; v <= a.Max+step/2; v += step {
		a.Ticks = append(a.Ticks, v)
		a.Labels = append(a.Labels, itoa(int(v)))
	}
	return a
}
