// WebP by libwebp (see webp_codec.h).
#include "image/webp_codec.h"

#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
#include <webp/mux.h>

#include <cstring>

#include "image/codec_common.h"
#include "util/error.h"

namespace blurtool {

namespace {

const char* status_text(VP8StatusCode s) {
  switch (s) {
    case VP8_STATUS_OK:
      return "ok";
    case VP8_STATUS_OUT_OF_MEMORY:
      return "out of memory";
    case VP8_STATUS_INVALID_PARAM:
      return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR:
      return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return "unsupported feature";
    case VP8_STATUS_SUSPENDED:
      return "suspended";
    case VP8_STATUS_USER_ABORT:
      return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return "not enough data";
  }
  return "unknown error";
}

std::uint32_t le32(const std::uint8_t* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

const char* encoder_error(WebPEncodingError e) {
  switch (e) {
    case VP8_ENC_ERROR_OUT_OF_MEMORY:
    case VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY:
      return "out of memory";
    case VP8_ENC_ERROR_BAD_DIMENSION:
      return "bad dimension";
    case VP8_ENC_ERROR_PARTITION0_OVERFLOW:
    case VP8_ENC_ERROR_PARTITION_OVERFLOW:
      return "partition overflow";
    case VP8_ENC_ERROR_FILE_TOO_BIG:
      return "file too big";
    default:
      return "encoding failed";
  }
}

}  // namespace

bool has_webp_signature(const std::vector<std::uint8_t>& bytes) {
  static const char riff[] = "RIFF", webp[] = "WEBP";
  const std::size_t n = bytes.size();
  if (n < 4) return n > 0 && std::memcmp(bytes.data(), riff, n) == 0;
  if (std::memcmp(bytes.data(), riff, 4) != 0) return false;
  if (n <= 8) return true;
  const std::size_t m = std::min<std::size_t>(n, 12) - 8;
  return std::memcmp(bytes.data() + 8, webp, m) == 0;
}

WebpHeader read_webp_header(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  if (bytes.size() < 12 || !has_webp_signature(bytes))
    throw Error(name + ": truncated WebP (the file ends at byte " + std::to_string(bytes.size()) +
                ", inside its RIFF header)");
  const std::uint64_t riff = std::uint64_t{le32(&bytes[4])} + 8;
  if (bytes.size() < riff)
    throw Error(name + ": truncated WebP (its RIFF header says " + std::to_string(riff) +
                " bytes, the file has " + std::to_string(bytes.size()) + ")");
  WebPBitstreamFeatures f;
  const VP8StatusCode s = WebPGetFeatures(bytes.data(), bytes.size(), &f);
  if (s != VP8_STATUS_OK)
    throw Error(name + ": corrupt WebP header (libwebp: " + status_text(s) + ")");
  if (f.has_animation) throw Error(name + ": animated WebP is not supported");
  WebpHeader h;
  h.width = f.width;
  h.height = f.height;
  h.channels = f.has_alpha ? 4 : 3;
  h.lossless = f.format == 2;
  return h;
}

Image decode_webp(const std::vector<std::uint8_t>& bytes, const std::string& name, bool rgba) {
  const WebpHeader h = read_webp_header(bytes, name);
  Image image;
  image.width = h.width;
  image.height = h.height;
  image.channels = rgba ? 4 : h.channels;
  image.pixels.resize(checked_size(h.width, h.height, image.channels, "decode_webp"));
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) throw Error(name + ": libwebp version mismatch");
  config.output.colorspace = image.channels == 4 ? MODE_RGBA : MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = image.pixels.data();
  config.output.u.RGBA.stride = h.width * image.channels;
  config.output.u.RGBA.size = image.pixels.size();
  const VP8StatusCode s = WebPDecode(bytes.data(), bytes.size(), &config);
  WebPFreeDecBuffer(&config.output);
  if (s != VP8_STATUS_OK) throw Error(name + ": corrupt WebP (libwebp: " + status_text(s) + ")");
  return image;
}

std::vector<std::uint8_t> encode_webp(const Image& image, int channels,
                                      const EncodeOptions& options, const ImageMetadata& metadata) {
  check_image(image, "encode_webp");
  if (channels < 1 || channels > image.channels)
    throw Error("encode_webp: " + std::to_string(channels) + " channels of a " +
                std::to_string(image.channels) + "-channel image");
  if (options.jpeg_quality < 1 || options.jpeg_quality > 100)
    throw UsageError("WebP quality must be 1..100, got " + std::to_string(options.jpeg_quality));
  if (image.width > kMaxWebpSide || image.height > kMaxWebpSide)
    throw Error("encode_webp: the image is " + std::to_string(image.width) + "x" +
                std::to_string(image.height) + ", too large for WebP (at most " +
                std::to_string(kMaxWebpSide) + " pixels a side)");
  const bool alpha = channels == 2 || channels == 4;
  const int out = alpha ? 4 : 3;
  // RGB or RGBA as libwebp imports them: the image's own rows where they are that already.
  const std::uint8_t* rows = image.pixels.data();
  std::vector<std::uint8_t> packed;
  if (image.channels != out || channels != image.channels) {
    packed.resize(static_cast<std::size_t>(image.width) * image.height * out);
    const int a = image.channels == 4 ? 3 : 1;  // where a 2- or 4-channel output's alpha is
    for (std::size_t p = 0, n = static_cast<std::size_t>(image.width) * image.height; p < n; ++p) {
      const std::uint8_t* s = &image.pixels[p * image.channels];
      std::uint8_t* d = &packed[p * out];
      for (int c = 0; c < 3; ++c) d[c] = channels >= 3 ? s[c] : s[0];
      if (alpha) d[3] = s[channels == 4 ? 3 : a];
    }
    rows = packed.data();
  }
  WebPConfig config;
  WebPPicture picture;
  if (!WebPConfigInit(&config) || !WebPPictureInit(&picture))
    throw Error("encode_webp: libwebp version mismatch");
  config.quality = static_cast<float>(options.jpeg_quality);
  if (options.webp_lossless) {
    config.lossless = 1;
    config.quality = 75;  // lossless: the effort, cwebp's default
    config.exact = 1;
  }
  config.thread_level = options.threads == 1 ? 0 : 1;
  picture.use_argb = options.webp_lossless ? 1 : 0;
  picture.width = image.width;
  picture.height = image.height;
  WebPMemoryWriter writer;
  WebPMemoryWriterInit(&writer);
  picture.writer = WebPMemoryWrite;
  picture.custom_ptr = &writer;
  const int stride = image.width * out;
  const int imported = out == 4 ? WebPPictureImportRGBA(&picture, rows, stride)
                                : WebPPictureImportRGB(&picture, rows, stride);
  const bool ok = imported && WebPEncode(&config, &picture);
  const WebPEncodingError error = picture.error_code;
  WebPPictureFree(&picture);
  if (!ok) {
    WebPMemoryWriterClear(&writer);
    throw Error(std::string("encode_webp: ") + encoder_error(error));
  }
  std::vector<std::uint8_t> bytes(writer.mem, writer.mem + writer.size);
  WebPMemoryWriterClear(&writer);
  if (metadata.icc.empty() && metadata.exif.empty() && metadata.xmp.empty()) return bytes;
  // The metadata chunks, in the extended container WebPMux assembles around the image.
  const WebPData image_data{bytes.data(), bytes.size()};
  WebPMux* mux = WebPMuxCreate(&image_data, 0);
  if (!mux) throw Error("encode_webp: WebPMux cannot read the encoded image");
  const auto set = [&](const char* fourcc, const void* data, std::size_t size) {
    if (!size) return true;
    const WebPData chunk{static_cast<const std::uint8_t*>(data), size};
    return WebPMuxSetChunk(mux, fourcc, &chunk, 0) == WEBP_MUX_OK;
  };
  WebPData assembled{nullptr, 0};
  const bool muxed = set("ICCP", metadata.icc.data(), metadata.icc.size()) &&
                     set("EXIF", metadata.exif.data(), metadata.exif.size()) &&
                     set("XMP ", metadata.xmp.data(), metadata.xmp.size()) &&
                     WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK;
  WebPMuxDelete(mux);
  if (!muxed) {
    WebPDataClear(&assembled);
    throw Error("encode_webp: WebPMux cannot add the metadata chunks");
  }
  bytes.assign(assembled.bytes, assembled.bytes + assembled.size);
  WebPDataClear(&assembled);
  return bytes;
}

ImageMetadata read_webp_metadata(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                 std::vector<std::string>* warnings) {
  ImageMetadata m;
  const WebPData data{bytes.data(), bytes.size()};
  WebPDemuxer* demux = WebPDemux(&data);
  if (!demux) {
    if (warnings)
      warnings->push_back(name + ": WebP metadata left out (WebPDemux cannot parse it)");
    return m;
  }
  WebPChunkIterator it;
  if (WebPDemuxGetChunk(demux, "ICCP", 1, &it)) {
    m.icc.assign(it.chunk.bytes, it.chunk.bytes + it.chunk.size);
    WebPDemuxReleaseChunkIterator(&it);
  }
  if (WebPDemuxGetChunk(demux, "EXIF", 1, &it)) {
    m.exif.assign(it.chunk.bytes, it.chunk.bytes + it.chunk.size);
    WebPDemuxReleaseChunkIterator(&it);
  }
  if (WebPDemuxGetChunk(demux, "XMP ", 1, &it)) {
    m.xmp.assign(reinterpret_cast<const char*>(it.chunk.bytes), it.chunk.size);
    WebPDemuxReleaseChunkIterator(&it);
  }
  WebPDemuxDelete(demux);
  return m;
}

}  // namespace blurtool
