//! A plot on a `<canvas>`: the same drawing function as the native SVG tests, on plotters'
//! canvas backend. The canvas has `role="img"` and the plot's description as its label.

use std::rc::Rc;

use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::plots::{Plot, draw};

/// Props of [`PlotCanvas`].
#[derive(Properties, PartialEq)]
pub struct PlotCanvasProps {
    /// What to draw.
    pub plot: Rc<Plot>,
    /// Canvas width in pixels.
    #[prop_or(480)]
    pub width: u32,
    /// Canvas height in pixels.
    #[prop_or(340)]
    pub height: u32,
    /// A `data-plot` name for tests and styling.
    #[prop_or_default]
    pub name: AttrValue,
}

/// A plot drawn on a canvas whenever its data change.
#[function_component(PlotCanvas)]
pub fn plot_canvas(props: &PlotCanvasProps) -> Html {
    let canvas = use_node_ref();
    let error = use_state(|| None::<String>);
    {
        let (canvas, error) = (canvas.clone(), error.setter());
        use_effect_with(props.plot.clone(), move |plot| {
            let result = canvas
                .cast::<web_sys::HtmlCanvasElement>()
                .and_then(CanvasBackend::with_canvas_object)
                .ok_or_else(|| "no canvas to draw on".to_owned())
                .and_then(|backend| {
                    draw(plot, &backend.into_drawing_area()).map_err(|e| e.to_string())
                });
            error.set(result.err());
        });
    }
    let description = props.plot.description();
    html! {
        <figure class="plot">
            <canvas ref={canvas} width={props.width.to_string()} height={props.height.to_string()}
                role="img" aria-label={description.clone()} data-plot={props.name.clone()} />
            if let Some(e) = &*error {
                <p class="error" role="alert">{ e }</p>
            }
        </figure>
    }
}

/// Pixel variance of a canvas's red channel: 0 for a blank canvas (used by tests).
pub fn canvas_variance(canvas: &web_sys::HtmlCanvasElement) -> Option<f64> {
    let context = canvas
        .get_context("2d")
        .ok()??
        .dyn_into::<web_sys::CanvasRenderingContext2d>()
        .ok()?;
    let data = context
        .get_image_data(
            0.0,
            0.0,
            f64::from(canvas.width()),
            f64::from(canvas.height()),
        )
        .ok()?
        .data();
    let values: Vec<f64> = data.iter().step_by(4).map(|&v| f64::from(v)).collect();
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    Some(values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n)
}
