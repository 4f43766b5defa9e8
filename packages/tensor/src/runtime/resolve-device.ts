import { cudaUnavailableReason } from './cuda-provider';
import type { Device } from './runtime-types';

/** What {@link resolveDevice} decided. */
export interface DeviceResolution {
  /** 'cpu' and 'cuda' as asked; 'auto' becomes 'cpu' when CUDA is known to be missing, else stays 'auto'. */
  device: Device;
  /** Why 'auto' became 'cpu', as the end of a sentence, for the caller's one log line. */
  fallbackReason?: string;
}

/**
 * The one decision of `device: 'auto'` before any session opens: the CPU when this machine has
 * no CUDA provider or misses a CUDA library it needs ({@link cudaUnavailableReason}); otherwise
 * 'auto' stays, and a runtime's first session tries CUDA and falls back to the CPU when ONNX
 * Runtime cannot start it. A process with several runtimes (one per pipeline stage) resolves
 * once and passes the result on, so the fallback is reported once.
 */
export function resolveDevice(device: Device): DeviceResolution {
  if (device !== 'auto') return { device };
  const fallbackReason = cudaUnavailableReason();
  return fallbackReason === undefined ? { device } : { device: 'cpu', fallbackReason };
}
