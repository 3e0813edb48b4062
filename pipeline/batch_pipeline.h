// The batch driver: every image of the INPUT files and folders through one operation into an
// output folder, the stages of pipeline/pipeline.h overlapping: decoding and encoding on a pool of
// host threads, device work on threads of each device (--device, or --devices to spread the
// batch), with a cap on the images held in memory.
#pragma once

#include "pipeline/pipeline.h"

namespace blurtool {

/// Runs a batch (o.batch): plans every INPUT (files, folders, -r) into the folder o.output
/// (made if missing; removed again, while still empty, if a device fails to open), skips
/// existing outputs unless --force, refuses an output that is an input or the output of another
/// input, runs the stages on the device(s) of --device or --devices, reports each failing file
/// on stderr and goes on; progress on a terminal and a summary unless --quiet; with
/// o.stage_times, a table on stdout of each stage's CPU and wall milliseconds per image (thread
/// CPU clocks around each stage) and the CPU the whole process spent outside them (the OpenCL
/// drivers' threads, waiting that spins). Returns the exit
/// status: 0 every image done or skipped, 1 some failed. Throws blurtool::UsageError before any
/// output for a bad output folder or device list, or for a schedule a device cannot run (the
/// first images may have been decoded meanwhile, their messages dropped); blurtool::Error (or
/// cl::Error) for a device that cannot be opened, before any output is written. (With no device
/// named and CPU devices alone, or no OpenCL driver, or a short batch, a box filter's or
/// Gaussian's images run on the host and a device is opened only for an image the host cannot
/// take, after outputs were written: its failure then fails the images that waited for it.)
int run_batch(const JobOptions& o);

/// The devices of `--devices all` among `devices` (list_devices()): every GPU and accelerator
/// where there is one, else every device. A CPU device beside GPUs would take images at a
/// fraction of a GPU's rate on the cores that decode and encode for the GPUs; it joins by its
/// index (`--devices all,N`).
std::vector<DeviceInfo> every_device(const std::vector<DeviceInfo>& devices);

}  // namespace blurtool
