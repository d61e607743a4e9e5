/**
 * A button that asks before acting, in a native modal `<dialog>` (focus is trapped and Escape cancels,
 * as the platform does it). `onConfirm` runs only after the operator confirms.
 */
import { useRef } from 'preact/hooks';
import type { ComponentChildren } from 'preact';

export interface ConfirmButtonProps {
  label: string;
  question: ComponentChildren;
  confirmLabel: string;
  disabled?: boolean;
  onConfirm(): void;
}

export function ConfirmButton(p: ConfirmButtonProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  return (
    <>
      <button type="button" disabled={p.disabled} onClick={() => dialog.current?.showModal()}>{p.label}</button>
      <dialog ref={dialog} aria-label={p.label}>
        <form method="dialog" onSubmit={(e) => {
          const confirmed = (e.submitter as HTMLButtonElement | null)?.value === 'confirm';
          if (confirmed) p.onConfirm();
        }}>
          <p>{p.question}</p>
          <div class="dialog-buttons">
            <button type="submit" value="cancel" autofocus>Cancel</button>
            <button type="submit" value="confirm" class="primary">{p.confirmLabel}</button>
          </div>
        </form>
      </dialog>
    </>
  );
}
