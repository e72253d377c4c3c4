package shop;

import java.util.HashMap;
import java.util.Map;

/** Serves account operations to the HTTP layer, one thread per request. */
public class AccountService {
    private final AccountRepo repo;
    private final Map<String, Integer> balanceRequests = new HashMap<>();

    public AccountService(AccountRepo repo) {
        this.repo = repo;
    }

    /** Returns the balance of the account, in cents. */
    public long balance(String accountId) {
        balanceRequests.merge(accountId, 1, Integer::sum);
        Account account = repo.findById(accountId);
        return account.getBalanceCents();
    }

    /** How often the balance of the account was asked for. */
    public int balanceRequests(String accountId) {
        return balanceRequests.getOrDefault(accountId, 0);
    }
}
