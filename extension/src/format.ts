/** Small formatting helpers shared by the views. */

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) {
    return '–';
  }
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

export function formatShape(shape: readonly number[] | null | undefined): string {
  return shape ? `[${shape.join(', ')}]` : '';
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
