/**
 * A section whose data the admin API does not serve yet. Each names the route it waits for, so the gap is
 * visible to operators and easy to find in code (grep `NotAvailableYet`).
 */
export function NotAvailableYet(props: { title: string; waitsFor: string; id?: string }) {
  const headingId = `${props.id ?? props.title.toLowerCase().replace(/\W+/g, '-')}-heading`;
  return (
    <section class="placeholder" aria-labelledby={headingId} data-placeholder={props.waitsFor}>
      <h2 id={headingId}>{props.title}</h2>
      <p><strong>Not available yet.</strong> Waits for {props.waitsFor}.</p>
    </section>
  );
}
