/** Messages between the layout client (main thread) and the layout worker. */

export interface LayoutRequest {
  id: number;
  dot: string;
}

export type LayoutReply = { id: number; svg: string; ms: number } | { id: number; error: string };
