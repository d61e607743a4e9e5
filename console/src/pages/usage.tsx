/** Usage: cost and tokens per day by model, job type, credential mode and top users — waits for its routes. */
import { NotAvailableYet } from '../components/placeholder.tsx';

export function UsagePage() {
  return (
    <>
      <h1 tabIndex={-1}>Usage</h1>
      <NotAvailableYet title="Cost and tokens per day" waitsFor="the admin usage-rollup routes (tokens and cost per day × job type × model × credential mode, per user)" />
    </>
  );
}
