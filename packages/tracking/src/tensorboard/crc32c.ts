/** CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) lookup table, one entry per byte value. */
const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
    table[byte] = crc >>> 0;
  }
  return table;
})();

/** CRC-32C of `bytes`, the checksum TFRecord files use. */
export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * The masked CRC-32C TFRecord stores: rotated right by 15 bits plus 0xa282ead8, so that a CRC
 * over data that itself holds CRCs stays well distributed (TensorFlow's `crc32c::Mask`).
 */
export function maskedCrc32c(bytes: Uint8Array): number {
  const crc = crc32c(bytes);
  return (((crc >>> 15) | (crc << 17)) + 0xa282ead8) >>> 0;
}
