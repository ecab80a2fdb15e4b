/*
Copyright The nginx-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"fmt"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// plotted are the panels of benchmarks.svg: a latency per operation against the
// number of objects, one line per target and format.
var plotted = []struct {
	op, title string
	value     func(*OpResult) float64
}{
	{opList, "List all: p50 latency", p50},
	{opGet, "Get: p50 latency", p50},
	{opCreate, "Create: p99 latency", p99},
	{opWatch, "Watch delivery: p99 latency", p99},
	{opPaginate, "Paginated list: p50 latency", p50},
	{opWatchFanout, "Delivery to many watchers: p99 latency", p99},
}

// writePlot draws latency against object count for each target and format.
func writePlot(file string, r *Result) error {
	const cols = 2
	rows := (len(plotted) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for i, panel := range plotted {
		p, err := panelPlot(r, panel.op, panel.title, panel.value)
		if err != nil {
			return err
		}
		plots[i/cols] = append(plots[i/cols], p)
	}
	for len(plots[rows-1]) < cols {
		plots[rows-1] = append(plots[rows-1], nil)
	}
	width, height := 32*vg.Centimeter, vg.Length(rows)*12*vg.Centimeter
	canvas := vgsvg.New(width, height)
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: vg.Millimeter * 5, PadBottom: vg.Millimeter * 5, PadLeft: vg.Millimeter * 5, PadRight: vg.Millimeter * 5}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j, p := range plots[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = canvas.WriteTo(f)
	return err
}

func panelPlot(r *Result, op, title string, value func(*OpResult) float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "objects per target"
	p.Y.Label.Text = "ms"
	p.Legend.Top = true
	p.Legend.Left = true
	var lines []any
	for _, key := range r.seriesKeys(op) {
		var pts plotter.XYs
		for _, size := range r.Settings.Sizes {
			if o := r.find(op, size, key[0], key[1]); o != nil && o.P50.Valid() {
				pts = append(pts, plotter.XY{X: float64(size), Y: value(o)})
			}
		}
		if len(pts) > 0 {
			lines = append(lines, fmt.Sprintf("%s %s", key[0], key[1]), pts)
		}
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, err
	}
	return p, nil
}

// seriesKeys are the (target, format) pairs measured for an operation, in table order.
func (r *Result) seriesKeys(op string) [][2]string {
	seen := map[[2]string]bool{}
	var keys [][2]string
	for _, o := range r.rows(op, r.Settings.Sizes[len(r.Settings.Sizes)-1]) {
		k := [2]string{o.Target, o.Format}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}
