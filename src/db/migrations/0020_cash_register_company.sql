-- What a fiscal receipt says about the organization that issues it (docs/receipts.md "Configuration"): its
-- taxpayer number, the sender's email (also the buyer's contact sent), the place of settlement and the taxation
-- system. Checked when the settings are saved; rows saved before stay NULL until the operator completes them.
ALTER TABLE cash_register_setting
  ADD COLUMN inn text CHECK (inn ~ '^([0-9]{10}|[0-9]{12})$'),
  ADD COLUMN company_email text,
  ADD COLUMN payment_address text,
  ADD COLUMN taxation_system text CHECK (
    taxation_system IN (
      'GENERAL',
      'SIMPLIFIED_INCOME',
      'SIMPLIFIED_INCOME_MINUS_EXPENSES',
      'UNIFIED_AGRICULTURAL',
      'PATENT'
    )
  );
