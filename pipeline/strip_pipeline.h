// Images larger than the memory budget (--max-memory) run in strips of rows: the decoder hands
// out rows (image/row_codec.h), a strip of them with the filter's halo above and below goes
// through the device stage (DeviceStage, in one piece or in tiles, with the schedule auto takes
// for the whole image), and the strip's own rows go to an encoder that writes as it goes (PNG,
// JPEG, or TIFF into a file it seeks in; WebP has no such encoder). Host
// memory is then bounded by a strip, not by the image: O(width x (strip + 2 x halo)). Every
// output pixel reads the same input pixels as in one run, so the result is the one-piece
// result (separable-linear: within one level, as with --max-tile).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/pipeline.h"

namespace blurtool {

/// The default --max-memory: a quarter of the machine's physical memory, at most 4 GiB (and
/// 1 GiB where the size cannot be read).
std::uint64_t default_max_memory();

/// The memory budget of `o` in bytes: o.max_memory, or default_max_memory() where it is 0.
std::uint64_t memory_budget(const JobOptions& o);

/// Host bytes a pixel of a run takes at most: the decoded input and the result (4 bytes each at
/// 8 bits, 8 at 16: `wide`) and the device's images where the device is the host's memory
/// (the filter's input, output and intermediate: 24 bytes, or kWideTileBytesPerPixel where the
/// filter runs at 16 bits: `filter_wide`).
std::uint64_t run_bytes_per_pixel(bool wide, bool filter_wide);

/// How an image runs: in one piece (rows 0), or in strips of `rows` output rows each read with
/// `halo` rows above and below; `need` is the bytes the whole image would take in one piece.
struct StripPlan {
  int rows = 0;
  int halo = 0;
  std::uint64_t need = 0;
  /// The file cannot be read by rows (rows_unreadable): it is decoded whole first, its decoded
  /// size counted against the budget.
  bool decode_whole = false;
  bool streams() const { return rows > 0; }
};

/// The plan for o's operation on the image with `header` whose bytes are `bytes`, named `name`:
/// one piece where its run (run_bytes_per_pixel a pixel) fits memory_budget(o); else strips
/// that take at most a quarter of the budget, or 256 MiB, whichever is smaller, or more of it
/// where a strip of one row and its halo needs more (--bright: strips of whole blocks). Throws
/// blurtool::Error naming `name` and giving the bytes it would need when the image fits neither
/// way: even a strip of one row (one block row for --bright) is larger than the budget, or
/// `timed_by` (--bench) times it in one piece. A file that cannot be read by rows
/// (rows_unreadable: an interlaced PNG, an EXIF-rotated JPEG) is decoded whole (decode_whole)
/// where its decoded pixels and a strip fit.
StripPlan plan_strips(const JobOptions& o, const ImageHeader& header,
                      const std::vector<std::uint8_t>& bytes, const std::string& name,
                      const std::string& timed_by = {});

/// Throws blurtool::Error naming `name`, with the memory `plan` says the image needs, where
/// `kind` cannot be written in strips: a WebP (libwebp has no incremental encoder; PNG, JPEG and
/// TIFF are suggested) and --bright's list of points (csv, json), which are made from the whole
/// image; and a TIFF where `output` (the output's path, "-" for standard output, or empty where
/// it is a temporary file) cannot be written at an offset (unseekable_reason: a pipe, a
/// device), which libtiff needs. Called before the device and the output are opened.
void check_strip_output(const JobOptions& o, OutputKind kind, const StripPlan& plan,
                        const std::string& name, const std::string& output = {});

/// Runs o's blur over the image in `in` strip by strip as `plan` says on `runtime` and hands
/// the encoded output for `kind` (PNG, JPEG or TIFF; the same samples as run_single's one-piece
/// result, with the same metadata) to `sink` as each strip's rows are encoded
/// (write_output_streamed makes it): a PNG's or JPEG's bytes in order (sink.append), a TIFF's
/// at their offsets (sink.write_at, which must be set). --bright draws each strip's glows from
/// the points of the blocks within the glow's reach, as in one piece; its list of points (a
/// csv or json `kind`) is refused. Warnings (each naming the input) are appended to
/// `warnings`. Throws blurtool::Error naming the input for a file that fails to decode (the
/// sink has then had part of the output), a `kind` check_strip_output refuses, or a TIFF
/// without sink.write_at; what the device stage throws and what the sink throws.
void run_strips(Runtime& runtime, const JobOptions& o, const InputBytes& in, OutputKind kind,
                const StripPlan& plan, const OutputSink& sink, std::vector<std::string>* warnings);

}  // namespace blurtool
