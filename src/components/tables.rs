//! Tables: a matrix's corner with its caption, and a coefficient table.

use yew::prelude::*;

use crate::model::analysis::CoefficientRow;
use crate::model::classroom::MatrixView;
use crate::model::format::{exact, p_value, sig};

/// Props of [`MatrixTable`].
#[derive(Properties, PartialEq)]
pub struct MatrixTableProps {
    /// The matrix view.
    pub view: MatrixView,
    /// Significant digits.
    #[prop_or(5)]
    pub digits: usize,
}

/// The top-left corner of a matrix, captioned with its size and who sees it.
#[function_component(MatrixTable)]
pub fn matrix_table(props: &MatrixTableProps) -> Html {
    let v = &props.view;
    let shown_rows = v.table.len();
    let shown_cols = v.table.first().map_or(0, Vec::len);
    html! {
        <div class="table-scroll">
            <table class="matrix">
                <caption>
                    { format!("{} — {} × {}", v.title, v.rows, v.cols) }
                    if shown_rows < v.rows || shown_cols < v.cols {
                        { format!(" (first {shown_rows} rows, {shown_cols} columns)") }
                    }
                    <br /><small>{ format!("Seen by: {}", v.seen_by) }</small>
                </caption>
                <thead><tr><th scope="col">{ "row" }</th>
                    { for v.headers.iter().map(|h| html! { <th scope="col">{ h }</th> }) }
                </tr></thead>
                <tbody>
                    { for v.table.iter().enumerate().map(|(i, row)| html! {
                        <tr><th scope="row">{ i + 1 }</th>
                            { for row.iter().map(|x| html! { <td>{ sig(*x, props.digits) }</td> }) }
                        </tr>
                    }) }
                </tbody>
            </table>
        </div>
    }
}

/// Props of [`CoefficientTable`].
#[derive(Properties, PartialEq)]
pub struct CoefficientTableProps {
    /// Rows.
    pub rows: Vec<CoefficientRow>,
    /// "t" or "z".
    pub statistic: AttrValue,
    /// Caption.
    pub caption: AttrValue,
    /// `data-testid` for tests.
    #[prop_or_default]
    pub test_id: AttrValue,
}

/// A regression table; each estimate also carries its full-precision value in `data-exact`.
#[function_component(CoefficientTable)]
pub fn coefficient_table(props: &CoefficientTableProps) -> Html {
    html! {
        <div class="table-scroll">
            <table class="coefficients" data-testid={props.test_id.clone()}>
                <caption>{ props.caption.clone() }</caption>
                <thead><tr>
                    <th scope="col">{ "term" }</th><th scope="col">{ "estimate" }</th>
                    <th scope="col">{ "std. error" }</th><th scope="col">{ props.statistic.clone() }</th>
                    <th scope="col">{ "p" }</th><th scope="col">{ "95% CI" }</th>
                </tr></thead>
                <tbody>
                    { for props.rows.iter().map(|c| html! {
                        <tr data-term={c.name.clone()}>
                            <th scope="row">{ &c.name }</th>
                            <td class="estimate" data-exact={exact(c.estimate)}>{ sig(c.estimate, 6) }</td>
                            <td class="std-error" data-exact={exact(c.std_error)}>{ sig(c.std_error, 4) }</td>
                            <td>{ sig(c.t, 4) }</td>
                            <td>{ p_value(c.p) }</td>
                            <td>{ format!("[{}, {}]", sig(c.ci_low, 4), sig(c.ci_high, 4)) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        </div>
    }
}
