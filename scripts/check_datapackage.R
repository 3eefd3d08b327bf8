# Issue 29 §2: a release opens with its labels in R. Reads DIR/datapackage.json with jsonlite and
# DIR/release.csv, builds the contingency table of two labelled factors from the released
# columns alone — each level's indicator is the affine combination of released columns that the
# package lists (orthomask:factors), whose cross-products are the raw counts because the masks
# are linear and keep 1ₙ fixed — and prints it as CSV (rows, columns, count) for
# scripts/check_datapackage.py to compare with the raw answers.
#
#   Rscript scripts/check_datapackage.R DIR ROW_FACTOR COLUMN_FACTOR
#
# It stops (non-zero exit) when the table's dimnames are not the levels' labels in the package's
# order or a cell is not a count. It never calls factor() on a masked column: its values are not
# codes.
suppressPackageStartupMessages(library(jsonlite))
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]
package <- fromJSON(file.path(dir, "datapackage.json"), simplifyVector = FALSE)
release <- Filter(function(r) r$path == "release.csv", package$resources)[[1]]
d <- read.csv(file.path(dir, release$path), check.names = FALSE)
factors <- release[["orthomask:factors"]]
names(factors) <- vapply(factors, function(f) f$name, "")

# One column per level: constant + sum of coefficient * released column.
indicators <- function(f) {
  z <- sapply(f$levels, function(level) {
    v <- rep(level$indicator$constant, nrow(d))
    for (t in level$indicator$terms) v <- v + t$coefficient * d[[t$column]]
    v
  })
  colnames(z) <- vapply(f$levels, function(level) level$label, "")
  z
}

labelled_table <- function(row, column) {
  zr <- indicators(factors[[row]])
  zc <- indicators(factors[[column]])
  counts <- crossprod(zr, zc)
  rounded <- round(counts)
  if (any(abs(counts - rounded) > 1e-6)) stop("a cell is not a count: ", paste(counts, collapse = " "))
  t <- as.table(rounded)
  names(dimnames(t)) <- c(row, column)
  t
}

t <- labelled_table(args[2], args[3])
want <- list(vapply(factors[[args[2]]]$levels, function(l) l$label, ""),
             vapply(factors[[args[3]]]$levels, function(l) l$label, ""))
if (!identical(unname(dimnames(t)), want)) stop("the table's dimnames are not the package's labels")
message(paste(capture.output(print(t)), collapse = "\n"))
out <- as.data.frame(t, stringsAsFactors = FALSE)
names(out) <- c("row", "column", "count")
write.csv(out, stdout(), row.names = FALSE)
