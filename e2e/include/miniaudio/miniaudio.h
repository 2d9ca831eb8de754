/*
 * A stand-in for the miniaudio header, written for servesim's end-to-end build
 * of Ollama. llama.cpp's multimodal helper (tools/mtmd/mtmd-helper.cpp) decodes
 * audio input with miniaudio; the Go module zip of Ollama does not carry that
 * vendored header and Debian 12 does not package it. Our model is text only,
 * so this header declares just the names the helper uses and makes every
 * decode fail cleanly: audio input is reported as undecodable, nothing else
 * changes.
 */
#ifndef SERVESIM_MINIAUDIO_STUB_H
#define SERVESIM_MINIAUDIO_STUB_H

#include <stddef.h>

#ifndef MA_API
#define MA_API static
#endif

typedef int ma_result;
typedef unsigned long long ma_uint64;
typedef unsigned int ma_uint32;

#define MA_SUCCESS 0
#define MA_ERROR (-1)
#define MA_NOT_IMPLEMENTED (-29)

typedef enum { ma_format_unknown = 0, ma_format_f32 = 5 } ma_format;
typedef enum { ma_encoding_format_unknown = 0, ma_encoding_format_wav } ma_encoding_format;

typedef struct {
    ma_format format;
    ma_uint32 channels;
    ma_uint32 sampleRate;
} ma_decoder_config;

typedef struct {
    ma_decoder_config config;
} ma_decoder;

#ifdef MINIAUDIO_IMPLEMENTATION
#if defined(__GNUC__)
#define SERVESIM_MA_UNUSED __attribute__((unused))
#else
#define SERVESIM_MA_UNUSED
#endif

SERVESIM_MA_UNUSED MA_API ma_decoder_config ma_decoder_config_init(ma_format format, ma_uint32 channels, ma_uint32 sample_rate) {
    ma_decoder_config c;
    c.format = format;
    c.channels = channels;
    c.sampleRate = sample_rate;
    return c;
}

SERVESIM_MA_UNUSED MA_API ma_result ma_decoder_init_memory(const void *data, size_t size, const ma_decoder_config *config, ma_decoder *decoder) {
    (void)data; (void)size; (void)config; (void)decoder;
    return MA_NOT_IMPLEMENTED;
}

SERVESIM_MA_UNUSED MA_API ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *decoder, ma_uint64 *length) {
    (void)decoder;
    if (length) { *length = 0; }
    return MA_NOT_IMPLEMENTED;
}

SERVESIM_MA_UNUSED MA_API ma_result ma_decoder_read_pcm_frames(ma_decoder *decoder, void *frames, ma_uint64 count, ma_uint64 *read) {
    (void)decoder; (void)frames; (void)count;
    if (read) { *read = 0; }
    return MA_NOT_IMPLEMENTED;
}

SERVESIM_MA_UNUSED MA_API ma_result ma_decoder_uninit(ma_decoder *decoder) {
    (void)decoder;
    return MA_SUCCESS;
}
#endif /* MINIAUDIO_IMPLEMENTATION */

#endif /* SERVESIM_MINIAUDIO_STUB_H */
