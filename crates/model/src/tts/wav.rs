//! WAV framing of PCM audio (16-bit, mono), as AgentScope hands TTS audio
//! to its frontend.

use futures_util::StreamExt;

use super::model::{AudioChunk, PCM_MEDIA_TYPE, TtsEvent, TtsStream};

/// The 44-byte RIFF header of 16-bit mono PCM at `sample_rate`, for
/// `data_len` bytes of samples; `None` writes the open-ended sizes
/// (`0xFFFFFFFF`) of a stream whose length is not known yet.
#[must_use]
pub fn wav_header(sample_rate: u32, data_len: Option<u32>) -> [u8; 44] {
    const CHANNELS: u16 = 1;
    const BITS: u16 = 16;
    let block_align = CHANNELS * BITS / 8;
    let byte_rate = sample_rate.saturating_mul(u32::from(block_align));
    let (riff_len, data_len) = match data_len {
        Some(len) => (len.saturating_add(36), len),
        None => (u32::MAX, u32::MAX),
    };
    let mut header = [0u8; 44];
    let fields: [&[u8]; 13] = [
        b"RIFF",
        &riff_len.to_le_bytes(),
        b"WAVE",
        b"fmt ",
        &16u32.to_le_bytes(),
        &1u16.to_le_bytes(),
        &CHANNELS.to_le_bytes(),
        &sample_rate.to_le_bytes(),
        &byte_rate.to_le_bytes(),
        &block_align.to_le_bytes(),
        &BITS.to_le_bytes(),
        b"data",
        &data_len.to_le_bytes(),
    ];
    let mut at = 0;
    for field in fields {
        if let Some(slot) = header.get_mut(at..at + field.len()) {
            slot.copy_from_slice(field);
        }
        at += field.len();
    }
    header
}

/// `pcm` in a self-contained WAV file.
#[must_use]
pub fn pcm_to_wav(pcm: &[u8], sample_rate: u32) -> Vec<u8> {
    let len = u32::try_from(pcm.len()).ok();
    let mut wav = Vec::with_capacity(pcm.len() + 44);
    wav.extend_from_slice(&wav_header(sample_rate, len));
    wav.extend_from_slice(pcm);
    wav
}

/// `stream` with its PCM chunks as one open-ended WAV stream, as
/// AgentScope streams TTS audio: the first PCM chunk is prefixed with a
/// streaming header ([`wav_header`] with no length) and every PCM chunk is
/// labelled `audio/wav`. Other audio passes unchanged.
#[must_use]
pub fn wav_stream(stream: TtsStream) -> TtsStream {
    let mut header_sent = false;
    stream
        .map(move |item| match item {
            Ok(TtsEvent::Audio(chunk)) if chunk.media_type == PCM_MEDIA_TYPE => {
                let rate = chunk.sample_rate.unwrap_or(24_000);
                let data = if header_sent {
                    chunk.data
                } else {
                    header_sent = true;
                    let mut data = wav_header(rate, None).to_vec();
                    data.extend_from_slice(&chunk.data);
                    data
                };
                Ok(TtsEvent::Audio(AudioChunk {
                    data,
                    media_type: "audio/wav".to_owned(),
                    sample_rate: Some(rate),
                }))
            }
            other => other,
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::stream;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_header_describes_16_bit_mono_pcm() {
        let header = wav_header(24_000, Some(480));
        assert_eq!(&header[0..4], b"RIFF");
        assert_eq!(u32::from_le_bytes(header[4..8].try_into().unwrap()), 516);
        assert_eq!(&header[8..16], b"WAVEfmt ");
        assert_eq!(
            u32::from_le_bytes(header[24..28].try_into().unwrap()),
            24_000
        );
        assert_eq!(
            u32::from_le_bytes(header[28..32].try_into().unwrap()),
            48_000
        );
        assert_eq!(u16::from_le_bytes(header[34..36].try_into().unwrap()), 16);
        assert_eq!(&header[36..40], b"data");
        assert_eq!(u32::from_le_bytes(header[40..44].try_into().unwrap()), 480);
        let open = wav_header(24_000, None);
        assert_eq!(&open[4..8], &[0xFF; 4]);
        assert_eq!(&open[40..44], &[0xFF; 4]);
        assert_eq!(pcm_to_wav(&[1, 2], 8_000).len(), 46);
    }

    #[tokio::test]
    async fn only_the_first_pcm_chunk_gets_the_streaming_header() {
        let pcm = |data: Vec<u8>| {
            Ok(TtsEvent::Audio(AudioChunk {
                data,
                media_type: PCM_MEDIA_TYPE.to_owned(),
                sample_rate: Some(24_000),
            }))
        };
        let items = vec![
            pcm(vec![1, 2]),
            pcm(vec![3]),
            Ok(TtsEvent::Done { usage: None }),
        ];
        let out: Vec<_> = wav_stream(stream::iter(items).boxed()).collect().await;
        let Ok(TtsEvent::Audio(first)) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(first.data.len(), 46);
        assert_eq!(first.media_type, "audio/wav");
        let Ok(TtsEvent::Audio(second)) = &out[1] else {
            panic!("{out:?}")
        };
        assert_eq!(second.data, vec![3]);
        assert_eq!(out[2], Ok(TtsEvent::Done { usage: None }));
    }
}
