//! Every figure as a function generic over plotters' `DrawingBackend` (plotters' `wasm-demo`
//! shape): the page draws on a canvas (`plotters-canvas`), native tests draw the same function
//! into an SVG string.
//!
//! A [`Plot`] carries the data of one figure; [`draw`] renders it on any drawing area.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::model::analysis::ScatterPanel;
use crate::model::dp::DpPoint;

/// Why a figure could not be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlotError {
    /// No finite data to draw.
    #[error("nothing to plot: {0}")]
    Empty(&'static str),
    /// The backend failed (canvas missing, …).
    #[error("drawing failed: {0}")]
    Backend(String),
}

fn backend<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Backend(e.to_string())
}

/// One figure's data.
#[derive(Clone, Debug, PartialEq)]
pub enum Plot {
    /// A scatter plot with its least-squares line (seed 003 Figure 2, one panel).
    Scatter(ScatterPanel),
    /// Residuals against fitted values.
    ResidualsVsFitted(Vec<(f64, f64)>),
    /// Normal quantile–quantile plot of standardised residuals.
    NormalQq(Vec<(f64, f64)>),
    /// A matrix as colours (blue negative, red positive, scaled to the largest |entry|).
    Heatmap {
        /// Caption.
        title: String,
        /// Rows of values.
        values: Vec<Vec<f64>>,
    },
    /// σ against ε under settings A and B (seed 004 Table 1), log–log.
    DpCurves(Vec<DpPoint>),
}

impl Plot {
    /// A short text alternative for screen readers.
    pub fn description(&self) -> String {
        match self {
            Self::Scatter(p) => format!(
                "{}: scatter plot of {} against {} ({} points) with the fitted line {}",
                p.title,
                p.y_name,
                p.x_name,
                p.total_points,
                p.equation()
            ),
            Self::ResidualsVsFitted(v) => {
                format!("Residuals against fitted values, {} points", v.len())
            }
            Self::NormalQq(v) => format!("Normal Q–Q plot of {} standardised residuals", v.len()),
            Self::Heatmap { title, values } => format!(
                "Heatmap of {title}: {} rows by {} columns, blue negative, red positive",
                values.len(),
                values.first().map_or(0, Vec::len)
            ),
            Self::DpCurves(v) => format!(
                "Noise standard deviation against epsilon for settings A and B, {} values of epsilon",
                v.len()
            ),
        }
    }
}

/// `[lo, hi]` of finite values, widened by 5% (and to a unit interval when flat).
fn range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return None;
    }
    let pad = if hi > lo {
        0.05 * (hi - lo)
    } else {
        0.5 * lo.abs().max(1.0)
    };
    Some((lo - pad, hi + pad))
}

const POINT: RGBColor = RGBColor(31, 119, 180);
const LINE: RGBColor = RGBColor(214, 39, 40);

fn scatter_with_line<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    x_label: &str,
    y_label: &str,
    points: &[(f64, f64)],
    line: Option<(f64, f64)>,
) -> Result<(), PlotError> {
    let (x0, x1) =
        range(points.iter().map(|p| p.0)).ok_or(PlotError::Empty("no finite x values"))?;
    let mut ys: Vec<f64> = points.iter().map(|p| p.1).collect();
    if let Some((a, b)) = line {
        ys.extend([a + b * x0, a + b * x1]);
    }
    let (y0, y1) = range(ys.into_iter()).ok_or(PlotError::Empty("no finite y values"))?;
    area.fill(&WHITE).map_err(backend)?;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(52)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(backend)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(backend)?;
    chart
        .draw_series(
            points
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .map(|&p| Circle::new(p, 3, POINT.filled())),
        )
        .map_err(backend)?;
    if let Some((a, b)) = line {
        chart
            .draw_series(LineSeries::new(
                [(x0, a + b * x0), (x1, a + b * x1)],
                LINE.stroke_width(2),
            ))
            .map_err(backend)?;
    }
    area.present().map_err(backend)
}

fn heat_colour(v: f64, scale: f64) -> RGBColor {
    let t = if scale > 0.0 {
        (v / scale).clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let fade = |full: u8, t: f64| (255.0 - (255.0 - f64::from(full)) * t.abs()) as u8;
    if t >= 0.0 {
        RGBColor(fade(178, t), fade(24, t), fade(43, t))
    } else {
        RGBColor(fade(33, t), fade(102, t), fade(172, t))
    }
}

fn heatmap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    values: &[Vec<f64>],
) -> Result<(), PlotError> {
    let rows = values.len();
    let cols = values.first().map_or(0, Vec::len);
    if rows == 0 || cols == 0 {
        return Err(PlotError::Empty("empty matrix"));
    }
    let scale = values
        .iter()
        .flatten()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    area.fill(&WHITE).map_err(backend)?;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 15))
        .margin(6)
        .x_label_area_size(22)
        .y_label_area_size(30)
        .build_cartesian_2d(0f64..cols as f64, 0f64..rows as f64)
        .map_err(backend)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("column")
        .y_labels(5)
        .y_label_formatter(&|y| format!("{}", rows as f64 - y.round()))
        .draw()
        .map_err(backend)?;
    chart
        .draw_series(values.iter().enumerate().flat_map(|(i, row)| {
            row.iter().enumerate().map(move |(j, &v)| {
                let top = (rows - i) as f64;
                Rectangle::new(
                    [(j as f64, top - 1.0), (j as f64 + 1.0, top)],
                    heat_colour(v, scale).filled(),
                )
            })
        }))
        .map_err(backend)?;
    area.present().map_err(backend)
}

/// A DP curve: legend label, colour, and which σ it plots.
type Series = (&'static str, RGBColor, fn(&DpPoint) -> f64);

fn dp_curves<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    points: &[DpPoint],
) -> Result<(), PlotError> {
    if points.is_empty() {
        return Err(PlotError::Empty("no epsilon values"));
    }
    let (e0, e1) = points.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.epsilon), hi.max(p.epsilon))
    });
    let all = points
        .iter()
        .flat_map(|p| [p.a_necessary, p.a_sufficient, p.b_sufficient, p.b_explicit]);
    let (s0, s1) = all.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !(s0 > 0.0 && s1.is_finite() && e0 > 0.0) {
        return Err(PlotError::Empty("no positive sigma"));
    }
    area.fill(&WHITE).map_err(backend)?;
    let mut chart = ChartBuilder::on(area)
        .caption("σ needed for (ε, δ)-DP", ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(52)
        .build_cartesian_2d(
            (e0 * 0.9..e1 * 1.1).log_scale(),
            (s0 * 0.8..s1 * 1.25).log_scale(),
        )
        .map_err(backend)?;
    chart
        .configure_mesh()
        .x_desc("ε")
        .y_desc("σ")
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(backend)?;
    let series: [Series; 4] = [
        (
            "A: noise only, sufficient (12)",
            RGBColor(214, 39, 40),
            |p| p.a_sufficient,
        ),
        (
            "A: noise only, necessary (11)",
            RGBColor(255, 152, 150),
            |p| p.a_necessary,
        ),
        ("B: noise then mask, (13)", RGBColor(31, 119, 180), |p| {
            p.b_sufficient
        }),
        ("B: explicit bound (14)", RGBColor(158, 202, 225), |p| {
            p.b_explicit
        }),
    ];
    for (label, colour, value) in series {
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|p| (p.epsilon, value(p))),
                colour.stroke_width(2),
            ))
            .map_err(backend)?
            .label(label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(backend)?;
    area.present().map_err(backend)
}

/// Draw `plot` on `area`.
///
/// # Errors
/// [`PlotError::Empty`] when there is nothing finite to draw; [`PlotError::Backend`] when the
/// backend fails.
pub fn draw<DB: DrawingBackend>(
    plot: &Plot,
    area: &DrawingArea<DB, Shift>,
) -> Result<(), PlotError> {
    match plot {
        Plot::Scatter(p) => scatter_with_line(
            area,
            &p.title,
            &p.x_name,
            &p.y_name,
            &p.points,
            Some((p.intercept, p.slope)),
        ),
        Plot::ResidualsVsFitted(v) => scatter_with_line(
            area,
            "Residuals vs fitted",
            "fitted",
            "residual",
            v,
            Some((0.0, 0.0)),
        ),
        Plot::NormalQq(v) => scatter_with_line(
            area,
            "Normal Q–Q",
            "theoretical quantile",
            "standardised residual",
            v,
            Some((0.0, 1.0)),
        ),
        Plot::Heatmap { title, values } => heatmap(area, title, values),
        Plot::DpCurves(points) => dp_curves(area, points),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters_svg::SVGBackend;

    fn svg(plot: &Plot) -> Result<String, PlotError> {
        let mut out = String::new();
        {
            let area = SVGBackend::with_string(&mut out, (480, 320)).into_drawing_area();
            draw(plot, &area)?;
        }
        Ok(out)
    }

    fn panel() -> ScatterPanel {
        ScatterPanel {
            title: "t".into(),
            x_name: "x".into(),
            y_name: "y".into(),
            points: vec![(1.0, 2.0), (2.0, 4.1), (3.0, 5.9)],
            total_points: 3,
            intercept: 0.1,
            slope: 1.95,
        }
    }

    #[test]
    fn every_plot_renders_to_svg_with_marks() {
        let s = svg(&Plot::Scatter(panel())).unwrap();
        assert_eq!(s.matches("<circle").count(), 3);
        assert!(s.contains("<polyline"));
        let h = svg(&Plot::Heatmap {
            title: "XB".into(),
            values: vec![vec![1.0, -2.0], vec![0.5, 3.0]],
        })
        .unwrap();
        assert!(h.matches("<rect").count() >= 4);
        let points = crate::model::dp::dp_panel(&crate::model::dp::DpParams::default())
            .unwrap()
            .curve;
        let d = svg(&Plot::DpCurves(points)).unwrap();
        assert!(d.matches("<polyline").count() >= 4);
        assert!(svg(&Plot::NormalQq(vec![(-1.0, -0.9), (0.0, 0.1), (1.0, 1.2)])).is_ok());
    }

    #[test]
    fn empty_or_non_finite_data_is_an_error_not_a_panic() {
        assert_eq!(
            svg(&Plot::ResidualsVsFitted(vec![])),
            Err(PlotError::Empty("no finite x values"))
        );
        assert!(
            svg(&Plot::Heatmap {
                title: "e".into(),
                values: vec![]
            })
            .is_err()
        );
        assert!(svg(&Plot::ResidualsVsFitted(vec![(f64::NAN, 1.0)])).is_err());
        assert!(svg(&Plot::DpCurves(vec![])).is_err());
    }
}
