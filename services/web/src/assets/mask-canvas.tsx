import { useEffect, useRef } from "preact/hooks";

export type Tool = "brush" | "eraser";

/**
 * The brush layer: a canvas at the original's pixel size laid over it (scaled by CSS), painted
 * with pointer events (mouse, pen, touch). `onReady` hands the canvas to the editor for export.
 */
export function MaskCanvas({
  src,
  width,
  height,
  tool,
  size,
  onReady,
}: {
  src: string;
  width: number;
  height: number;
  tool: Tool;
  size: number;
  onReady: (c: HTMLCanvasElement) => void;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const last = useRef<{ x: number; y: number } | null>(null);
  const settings = useRef({ tool, size });
  settings.current = { tool, size };

  useEffect(() => {
    if (canvas.current) onReady(canvas.current);
  }, [width, height]);

  const point = (e: PointerEvent) => {
    const c = canvas.current!;
    const r = c.getBoundingClientRect();
    return { x: ((e.clientX - r.left) / r.width) * c.width, y: ((e.clientY - r.top) / r.height) * c.height, scale: c.width / r.width };
  };
  const stroke = (to: { x: number; y: number; scale: number }) => {
    const ctx = canvas.current!.getContext("2d")!;
    const from = last.current ?? to;
    ctx.globalCompositeOperation = settings.current.tool === "eraser" ? "destination-out" : "source-over";
    ctx.strokeStyle = "rgb(255, 40, 90)";
    // The size is in screen pixels, so the brush feels the same on a phone and on a large image.
    ctx.lineWidth = settings.current.size * to.scale;
    ctx.lineCap = "round";
    ctx.lineJoin = "round";
    ctx.beginPath();
    ctx.moveTo(from.x, from.y);
    ctx.lineTo(to.x, to.y);
    ctx.stroke();
    last.current = to;
  };

  return (
    <div class="stage" style={{ aspectRatio: `${width} / ${height}`, "--ratio": String(width / height) }}>
      <img src={src} alt="the image being masked" draggable={false} />
      <canvas
        ref={canvas}
        width={width}
        height={height}
        data-testid="mask-canvas"
        aria-label="Mask: paint over the parts to mask"
        onPointerDown={(e) => {
          e.preventDefault();
          e.currentTarget.setPointerCapture(e.pointerId);
          last.current = null;
          stroke(point(e));
        }}
        onPointerMove={(e) => {
          if (last.current) stroke(point(e));
        }}
        onPointerUp={() => (last.current = null)}
        onPointerCancel={() => (last.current = null)}
      />
    </div>
  );
}

/**
 * The mask as ComfyUI's mask editor writes it: opaque everywhere, transparent where painted
 * (the upload service reads it as `mask_type: alpha`, transparent = masked).
 */
export function exportMask(brush: HTMLCanvasElement): Promise<Blob> {
  const out = document.createElement("canvas");
  out.width = brush.width;
  out.height = brush.height;
  const ctx = out.getContext("2d")!;
  ctx.fillStyle = "#000";
  ctx.fillRect(0, 0, out.width, out.height);
  ctx.globalCompositeOperation = "destination-out";
  ctx.drawImage(brush, 0, 0);
  return new Promise((resolve, reject) =>
    out.toBlob((b) => (b ? resolve(b) : reject(new Error("the browser could not encode the mask as PNG"))), "image/png"),
  );
}

export function clearCanvas(c: HTMLCanvasElement): void {
  c.getContext("2d")!.clearRect(0, 0, c.width, c.height);
}
