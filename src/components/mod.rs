//! Widgets shared by the pages. Each takes props and reports through `Callback`s.
//!
//! * [`plot_canvas`] — a [`Plot`](crate::plots::Plot) drawn on a canvas, with a text alternative;
//! * [`number_control`] — a number field that keeps its draft until committed;
//! * [`progress`] — a job's progress bar and error line;
//! * [`tables`] — matrices and coefficient tables;
//! * [`file_picker`] — file picker with drag and drop, or a URL;
//! * [`save_button`] — save text as a file;
//! * [`input`] — the value of the control an event came from.

pub mod file_picker;
pub mod input;
pub mod language_switcher;
pub mod number_control;
pub mod plot_canvas;
pub mod progress;
pub mod receipts;
pub mod save_button;
pub mod tables;
